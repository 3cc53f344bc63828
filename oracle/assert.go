package oracle

// ASSERT modes of a compiled SoloPi step, by oracle operator. On the phone
// assert_regular is Java's String.matches: the whole text must match, while
// a host-judged checkpoint searches (Python re.search). Anchored tells
// whether a pattern means the same under both.
var assertModes = map[string]string{
	OpEquals:   "assert_accurate",
	OpContains: "assert_contain",
	OpMatches:  "assert_regular",
}

// AssertParams are the operationParam of the ASSERT step that checks o on
// the phone: the mode, the expected text, and assertTarget "description"
// when the oracle reads the content description.
func (o *UI) AssertParams() map[string]any {
	p := map[string]any{"assertMode": assertModes[o.Operator], "assertInputContent": o.Expected}
	if o.Field == FieldDescription {
		p["assertTarget"] = "description"
	}
	return p
}
