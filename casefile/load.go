package casefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
)

// maxViolations bounds the violations one error lists.
const maxViolations = 20

// Load reads a case file the way case-validate, case-import and the step
// edits do, and is what their fuzz targets drive: CheckJSON first (bytes
// that are not UTF-8, lone surrogates and duplicate keys would be changed
// silently by any decoder), then one decode (a syntax error or data after
// the document is invalid_case_json with solopi-ai's line and column),
// then the shape of case.schema.json (case_schema_violation, with up to 20
// violations and their JSON pointers), then Parse's reading of the tree.
func Load(data []byte) (*Case, error) {
	data = trimBOM(data)
	if err := CheckJSON(data); err != nil {
		return nil, err
	}
	g, err := decodeDocument(data, fault.CodeInvalidCaseJSON, "the case file")
	if err != nil {
		return nil, err
	}
	if v := CheckShape(g); len(v) > 0 {
		e := newError(fault.CodeCaseSchemaViolation, "the case file does not match the SoloPi case schema: %s %s", pointerName(v[0].Instance), v[0].Message).
			with("violations", v[:min(len(v), maxViolations)])
		e.Field, e.StepIndex = violationPlace(v[0])
		return nil, e
	}
	return parseTree(g, true)
}

// violationPlace names a violation as solopi-ai names the same refusal:
// the top-level field (field), or the step (stepIndex) it is in.
func violationPlace(v violation) (string, int) {
	parts := strings.Split(v.Instance, "/")
	switch {
	case len(parts) >= 4 && parts[1] == "operationLog" && parts[2] == "steps":
		if i, err := strconv.Atoi(parts[3]); err == nil {
			return "", i
		}
	case len(parts) >= 2:
		return strings.ReplaceAll(strings.ReplaceAll(parts[1], "~1", "/"), "~0", "~"), -1
	}
	if name, ok := strings.CutPrefix(v.Message, `missing properties: "`); ok {
		name, _, _ = strings.Cut(name, `"`)
		return name, -1
	}
	return "", -1
}

func pointerName(p string) string {
	if p == "" {
		return "the document"
	}
	return p
}

func trimBOM(data []byte) []byte { return bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF")) }

// decodeDocument decodes one JSON document. A document that is not JSON,
// or has data after it, is an error of code whose line and column (1-based,
// counted in characters, as Python's json module reports them) say where.
func decodeDocument(data []byte, code, what string) (any, error) {
	g, err := canonjson.Decode(data)
	if err == nil {
		return g, nil
	}
	if errors.Is(err, canonjson.ErrTooLarge) {
		return nil, newError(code, "%s is larger than %d bytes", what, canonjson.MaxDocumentBytes).wrap(err)
	}
	line, col := lineColumn(data, errorOffset(data, err))
	msg := "%s is not valid JSON (line %d, column %d)"
	if errors.Is(err, canonjson.ErrTrailingData) {
		msg = "%s has data after its JSON document (line %d, column %d)"
	}
	return nil, newError(code, msg, what, line, col).with("line", line).with("column", col).wrap(err)
}

// errorOffset is the byte offset of what made data fail to decode: the
// offending byte of a syntax error, the end of a truncated document, the
// first byte after a complete one.
func errorOffset(data []byte, err error) int {
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		return clampOffset(int(syn.Offset)-1, len(data))
	case errors.Is(err, canonjson.ErrTrailingData):
		dec := json.NewDecoder(bytes.NewReader(data))
		var v any
		if dec.Decode(&v) != nil {
			return len(data)
		}
		off := int(dec.InputOffset())
		return off + len(data[off:]) - len(bytes.TrimLeft(data[off:], " \t\r\n"))
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return len(data)
	}
	return 0
}

func clampOffset(off, n int) int { return max(0, min(off, n)) }

// lineColumn turns a byte offset into Python's lineno and colno: lines
// counted by '\n', the column in characters from 1.
func lineColumn(data []byte, off int) (int, int) {
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	if i := bytes.LastIndexByte(before, '\n'); i >= 0 {
		before = before[i+1:]
	}
	return line, utf8.RuneCount(before) + 1
}
