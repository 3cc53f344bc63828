package casefile

import (
	"slices"
	"strconv"
	"strings"

	"github.com/solopi-dev/solopi/redact"
)

// Redacted is what a secret is replaced with.
//
// Deprecated: use redact.Marker; this name stays while the command tests
// spell it.
const Redacted = redact.Marker

// ParamRef names one step parameter of a case: the step by its stepId,
// the parameter by its key. A list of them says where a case's secrets are
// without holding any.
type ParamRef struct {
	StepID string `json:"stepId"`
	Key    string `json:"key"`
}

// EncryptedParams lists the parameters SoloPi keeps encrypted in c, a case
// in the form it is imported (after Normalize): every parameter of a step
// that does not say "encrypt": false, in step order, keys sorted. Their
// values are secrets the replay may echo back (an ASSERT failure quotes its
// expected text, running.log repeats it). Only the imported form carries
// the flags: the device's case snapshot (harness?type=case) decrypts every
// value and sets every flag false (docs/file-formats.md#encrypted-parameters).
func EncryptedParams(c *Case) []ParamRef {
	return paramRefs(c, func(s Step, _ string) bool { return s.Method.EncryptedOnDevice() })
}

// inputParams are the parameters that carry data entered into, or compared
// with, the app under test, by action: the text typed by the input actions,
// the expected content of the assertions and the value a variable is set
// to. Those are where credentials and personal data go. The others are
// control values (durations, counts, scroll distances, modes, screenshot
// names, gestures, conditions) that say how to replay, not what to type.
var inputParams = map[string][]string{
	"INPUT": {"text"}, "CLICK_AND_INPUT": {"text"}, "INPUT_SEARCH": {"text"},
	"KEYBOARD_INPUT": {"text"}, "INPUT_GLOBAL": {"text"},
	"ASSERT": {"assertInputContent"}, "ASSERT_TOAST": {"assertInputContent"},
	"LET": {"allocValue"}, "LET_NODE": {"allocValue"},
}

// InputParams lists the input-bearing parameters of c (see inputParams):
// what is treated as secret in a case whose encrypted parameters are not
// known, such as the device's decrypted snapshot of a case this host did
// not import.
func InputParams(c *Case) []ParamRef {
	return paramRefs(c, func(s Step, key string) bool {
		return slices.Contains(inputParams[strings.ToUpper(s.Method.ActionEnum)], key)
	})
}

func paramRefs(c *Case, pick func(Step, string) bool) []ParamRef {
	out := []ParamRef{}
	for _, s := range c.Steps {
		keys := make([]string, 0, len(s.Method.Params))
		for k := range s.Method.Params {
			if pick(s, k) {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = append(out, ParamRef{StepID: s.StepID, Key: k})
		}
	}
	return out
}

// ParamValues returns the values of c's parameters at refs: the secrets
// to hide when c is the device's decrypted snapshot. Steps are matched by
// stepId; the list is deduplicated and sorted, empty values left out.
func ParamValues(c *Case, refs []ParamRef) []string {
	want := map[ParamRef]bool{}
	for _, r := range refs {
		want[r] = true
	}
	seen := map[string]bool{}
	out := []string{}
	for _, s := range c.Steps {
		for k, v := range s.Method.Params {
			if v == nil || *v == "" || seen[*v] || !want[ParamRef{StepID: s.StepID, Key: k}] {
				continue
			}
			seen[*v] = true
			out = append(out, *v)
		}
	}
	slices.Sort(out)
	return out
}

// secretStep reports a step whose author marked its parameters encrypted
// ("encrypt": true). Its values are secrets in every output of the local
// case commands; a value that is SoloPi ciphertext is one too, since the
// default key is public.
func secretStep(s *Step) bool { return s.Method.Encrypt != nil && *s.Method.Encrypt }

// shownValue is a parameter value of s as an output may show it.
func shownValue(s *Step, v string) string {
	if secretStep(s) {
		return redact.Marker
	}
	return v
}

// shown is shownValue quoted for a message.
func shown(s *Step, v string) string {
	if secretStep(s) {
		return redact.Marker
	}
	return strconv.Quote(v)
}

// RedactSecrets returns a copy of c for printing: every parameter value of a
// step marked encrypted is redact.Marker (null stays null). Files keep the
// values; only what is printed is redacted.
func RedactSecrets(c *Case) *Case {
	out := c.Clone()
	for i := range out.Steps {
		redactStep(&out.Steps[i])
	}
	return out
}

func redactStep(s *Step) {
	if !secretStep(s) {
		return
	}
	for k, v := range s.Method.Params {
		if v != nil {
			s.Method.Params[k] = Str(redact.Marker)
		}
	}
}

// SecretValues are the values c's author marked encrypted (what RedactSecrets
// hides), deduplicated and sorted: what a redactor of text about c, such
// as a device message quoting a parameter, must hide.
func SecretValues(c *Case) []string {
	return ParamValues(c, paramRefs(c, func(s Step, _ string) bool { return secretStep(&s) }))
}
