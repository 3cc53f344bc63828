package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/schemas/schematest"
)

func runLocal(t *testing.T, args ...string) (int, []byte) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append([]string{"solopi"}, args...), cmdutil.Env{Stdout: &stdout, Stderr: &stderr,
		Getenv: func(string) string { return "" }})
	return code, stdout.Bytes()
}

// `solopi schema` lists the input and output schemas; `solopi schema NAME`
// prints one that compiles; an unknown name is a usage error.
func TestSchemaCommand(t *testing.T) {
	t.Parallel()
	code, out := runLocal(t, "schema")
	if code != 0 {
		t.Fatalf("exit %d %s", code, out)
	}
	schematest.Validate(t, "schema", out)
	var l schemaList
	if err := json.Unmarshal(out, &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Inputs) != len(inputSchemas) || len(l.Outputs) < 100 {
		t.Fatalf("schema list %+v", l)
	}
	set := schematest.NewSet()
	for _, name := range append(l.Inputs, "run", "verify-run") {
		code, out := runLocal(t, "schema", name)
		if code != 0 {
			t.Fatalf("schema %s: exit %d %s", name, code, out)
		}
		schematest.Validate(t, "schema", out)
		if _, err := set.Compile(name); err != nil {
			t.Errorf("schema %s does not compile: %v", name, err)
		}
	}
	if code, out := runLocal(t, "schema", "nope"); code != 3 || !bytes.Contains(out, []byte(`"unknown_schema"`)) {
		t.Errorf("unknown schema: exit %d %s", code, out)
	}
}
