package casefile

import (
	"errors"
	"os"
	"testing"
)

func mustParseFile(t *testing.T, path string) *Case {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse(%s): %v", path, err)
	}
	return c
}

func mustParse(t *testing.T, s string) *Case {
	t.Helper()
	c, err := Parse([]byte(s))
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, s)
	}
	return c
}

func asError(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *casefile.Error", err, err)
	}
	return e
}

// caseWith builds an authoring-form case around the given steps JSON.
func caseWith(steps string) string {
	return `{"caseName":"c","targetAppPackage":"com.example.counter","operationLog":{"steps":` + steps + `}}`
}

const nodeJSON = `{"resourceId":"com.example.counter:id/increment_button"}`
