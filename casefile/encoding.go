package casefile

// CheckEncoding is CheckJSON without the duplicate-key rule, for JSON
// documents whose readers keep one of two values as Python's json does
// (verification requirements and plans): bytes that are not UTF-8 and \u
// escapes of lone UTF-16 surrogates are invalid_utf8, with the byte offset
// and the JSON path. Syntax errors are left to the decoder.
func CheckEncoding(data []byte) error {
	return check(&jsonScanner{data: data, doc: "$", duplicatesAllowed: true})
}
