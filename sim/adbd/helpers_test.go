package adbd

// appendMessage encodes m. withChecksum selects the byte-sum data_check that
// peers on protocol versions before versionSkipChecksum expect.
func appendMessage(buf []byte, m message, withChecksum bool) []byte {
	return append(appendHeader(buf, m, withChecksum), m.Data...)
}
