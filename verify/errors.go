package verify

import (
	"errors"
	"strings"

	"github.com/solopi-dev/solopi/fault"
)

// at says where in the document an input error is: seg (".steps[2]",
// ".action.type") is prepended to the error's jsonPath, so each level of
// the walk adds its own part and the user reads the whole path
// ("$.scenarios[0].steps[2].action.type"). Other errors pass unchanged.
func at(err error, seg string) error {
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Kind != fault.Invalid {
		return err
	}
	p, _ := fe.Details["jsonPath"].(string)
	fe.With("jsonPath", "$"+seg+strings.TrimPrefix(p, "$"))
	return err
}

// within gives an input error that does not yet say where it is the place
// path (an error from deeper in the walk already names its own).
func within(err error, path string) error {
	var fe *fault.Error
	if errors.As(err, &fe) && fe.Kind == fault.Invalid {
		if _, ok := fe.Details["jsonPath"]; !ok {
			fe.With("jsonPath", "$"+path)
		}
	}
	return err
}

// allowed adds the closed set of values a field takes to an input error.
func allowed(e *fault.Error, values ...string) *fault.Error {
	return e.With("allowed", values)
}

// invalid is a requirement or plan error (exit 3) with detail fields given
// as key, value pairs.
func invalid(code, msg string, kv ...any) *fault.Error {
	e := fault.Usage(code, msg)
	for i := 0; i+1 < len(kv); i += 2 {
		e.With(kv[i].(string), kv[i+1])
	}
	return e
}
