// Package schematest compiles the embedded schemas (package schemas) with
// santhosh-tekuri/jsonschema and validates real command output against
// them: the tests' one validator.
package schematest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/schemas"
)

// set compiles schemas on demand and caches them; schemas may $ref each other
// by file name (for example "error.schema.json").
type set struct {
	mu       sync.Mutex
	compiler *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema
}

// NewSet returns an empty cache over the embedded schemas.
func NewSet() *set {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	// Schemas load only from the embedded files: nothing is fetched.
	c.LoadURL = func(url string) (io.ReadCloser, error) {
		name := strings.TrimSuffix(strings.TrimPrefix(url, "embed:///"), schemas.Suffix)
		b, err := schemas.Raw(name)
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", url, err)
		}
		return io.NopCloser(bytes.NewReader(b)), nil
	}
	return &set{compiler: c, compiled: map[string]*jsonschema.Schema{}}
}

// Compile returns the compiled schema called name.
func (s *set) Compile(name string) (*jsonschema.Schema, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sch, ok := s.compiled[name]; ok {
		return sch, nil
	}
	sch, err := s.compiler.Compile("embed:///" + name + schemas.Suffix)
	if err != nil {
		return nil, fmt.Errorf("compile schema %s: %w", name, err)
	}
	s.compiled[name] = sch
	return sch, nil
}

// ValidateBytes checks that data is one JSON document valid against name.
func (s *set) ValidateBytes(name string, data []byte) error {
	sch, err := s.Compile(name)
	if err != nil {
		return err
	}
	v, err := canonjson.Decode(data)
	if errors.Is(err, canonjson.ErrTrailingData) {
		return fmt.Errorf("output holds more than one JSON value")
	}
	if err != nil {
		return fmt.Errorf("output is not JSON: %w", err)
	}
	if err := sch.Validate(v); err != nil {
		return fmt.Errorf("output does not match schema %s: %w", name, err)
	}
	return nil
}

// Validate is the test helper: it fails t unless data is valid against the
// schema called name. An error object (success=false with errorCode) is
// validated against the shared "error" schema instead, since every command
// may end with a handled error.
func Validate(t testing.TB, name string, data []byte) {
	t.Helper()
	set := NewSet()
	target := name
	var probe struct {
		Success   *bool   `json:"success"`
		ErrorCode *string `json:"errorCode"`
	}
	if json.Unmarshal(data, &probe) == nil && probe.Success != nil && !*probe.Success && probe.ErrorCode != nil {
		target = "error"
	}
	if err := set.ValidateBytes(target, data); err != nil {
		t.Fatalf("%v\noutput: %s", err, data)
	}
}
