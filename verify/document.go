package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
)

// Document is a parsed requirement: the generic tree plus the order in
// which each object's keys were written. The order matters in one place:
// solopi-ai resolves a binding map (parameters, testData, bindings, flow
// defaults and call-site bindings) in passes over its keys in written
// order, and whether a key may refer to a sibling depends on that order.
// Reproducing it keeps us accepting and rejecting the same requirements.
type Document struct {
	Tree any
	// order maps a JSON pointer ("/scenarios/0/testData") to the object's
	// keys in first-written order.
	order map[string][]string
}

// ParseRequirement reads a requirement file's bytes: UTF-8 JSON without
// lone surrogates (invalid_utf8), NaN or infinities (invalid_json).
func ParseRequirement(data []byte) (*Document, error) {
	if err := CheckEncoding(data, "requirement", fault.CodeInvalidUTF8); err != nil {
		return nil, err
	}
	tree, err := canonjson.Decode(data)
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, fault.CodeInvalidJSON, "the requirement is not valid JSON", err)
	}
	// Every later fingerprint hashes parts of this tree: refuse here what
	// canonical JSON cannot write, so that nothing fails half-way.
	if _, err := canonjson.Marshal(tree); err != nil {
		return nil, fault.Wrap(fault.Invalid, fault.CodeInvalidJSON, "the requirement has a value canonical JSON cannot represent", err)
	}
	order, err := keyOrder(data)
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, fault.CodeInvalidJSON, "the requirement is not valid JSON", err)
	}
	return &Document{Tree: tree, order: order}, nil
}

// keys returns m's keys in written order when known (pointer is m's JSON
// pointer), else sorted.
func (d *Document) keys(pointer string, m map[string]any) []string {
	if ks, ok := d.order[pointer]; ok && len(ks) == len(m) {
		return ks
	}
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// keyOrder records, for every object in the document, its keys in the
// order they first appear (a repeated key keeps its first position, as a
// Python dict does).
func keyOrder(data []byte) (map[string][]string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	out := map[string][]string{}
	var walk func(pointer string) error
	walk = func(pointer string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			var ks []string
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				k, _ := kt.(string)
				if !seen[k] {
					seen[k] = true
					ks = append(ks, k)
				}
				if err := walk(pointer + "/" + escapePointer(k)); err != nil {
					return err
				}
			}
			out[pointer] = ks
			_, err = dec.Token()
			return err
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if err := walk(pointer + "/" + strconv.Itoa(i)); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		}
		return nil
	}
	if err := walk(""); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("extra data after the value")
	}
	return out, nil
}

func escapePointer(k string) string {
	b := make([]byte, 0, len(k))
	for i := 0; i < len(k); i++ {
		switch k[i] {
		case '~':
			b = append(b, "~0"...)
		case '/':
			b = append(b, "~1"...)
		default:
			b = append(b, k[i])
		}
	}
	return string(b)
}
