package casefile

import (
	"bytes"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/redact"
)

// The fuzz targets drive Load, the entry point every local case command
// and case-import read files through. Their seeds (testdata/fuzz) are
// small on purpose: the fuzzer minimises every input that finds new code,
// and a large one costs it seconds of minimisation during which it runs
// nothing new.

// fuzzSeeds are short documents reaching each part of Load: both
// operationLog forms, nodes, providers, running params, nulls, secrets,
// the redaction marker, trailing data and the schema's refusals.
var fuzzSeeds = []string{
	`{"caseName":"c","targetAppPackage":"p","operationLog":{"steps":[{"operationMethod":{"actionEnum":"SLEEP","operationParam":{"text":"1"}},"operationNode":null}]}}`,
	`{"caseName":"c","targetAppPackage":"p","operationLog":"{\"steps\":[{\"operationMethod\":{\"actionEnum\":\"BACK\",\"encrypt\":true,\"operationParam\":{\"x\":\"A3B7B9427C4ABA1306B67EE0A2B330FC\"}}}]}"}`,
	`{"caseName":"c","targetAppPackage":"p","operationLog":{"steps":[{"stepId":"a","operationMethod":{"actionEnum":"click"},"operationNode":{"text":null,"depth":null,"nodeBound":{"left":1,"top":1,"right":2,"bottom":2},"extra":{"k":"v"},"assistantNodes":[{"text":"t"}]}}]}}`,
	`{"caseName":"c","targetAppPackage":"p","advanceSettings":"{\"runningParam\":{\"mode\":\"UNION\",\"paramList\":[{\"k\":\"v\"}]}}","operationLog":{"steps":[{"operationMethod":{"actionEnum":"startRecord","operationParam":{"checkList":"CPU"}}},{"operationMethod":{"actionEnum":"stopRecord"}}]}}`,
	`{"caseName":"c","targetAppPackage":"p","operationLog":{"steps":[{"operationMethod":{"actionEnum":"INPUT","encrypt":true,"operationParam":{"text":"[redacted]"}},"operationNode":{"resourceId":"r"}}]}}`,
	`{"caseName":"c","targetAppPackage":"p","priority":3,"id":1,"gmtCreate":1,"caseFingerprint":"x","operationLog":{"steps":[]}} junk`,
	`{"caseName":"c","targetAppPackage":"p","operationLog":{"steps":[{"operationMethod":{"actionEnum":"CLEAR_DATA"}},{"operationMethod":{"actionEnum":"EXECUTE_SHELL","operationParam":{"text":1}}}]}}}`,
	"\xef\xbb\xbf{\"caseName\":\"\xff\"}",
}

func addSeeds(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
}

// FuzzParse: Load never panics, refuses only with a typed error, accepts
// only what CheckJSON and the schema accept; a case it accepts normalises
// (or is refused with a code) under the import policy, its import file
// loads back to the same file, and its printed form holds no value its
// author marked encrypted.
func FuzzParse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Load(data)
		if err != nil {
			if errorCode(err) == "" {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if CheckJSON(trimBOM(data)) != nil {
			t.Fatal("Load accepted a document CheckJSON refuses")
		}
		if _, err := SnapshotOperationLog(c.Steps, ""); err != nil {
			t.Fatalf("snapshot: %v", err)
		}
		n, _, err := Normalize(c, NormalizeOptions{ConfirmHighRisk: true, Operation: "import"})
		if err != nil {
			if errorCode(err) == "" {
				t.Fatalf("untyped normalize error %v", err)
			}
			return
		}
		if err := DeviceValidate(n); err != nil && !strings.Contains(err.Error(), "no supported action") && !strings.Contains(err.Error(), "grounded") {
			t.Fatalf("normalised case fails device validation: %v", err)
		}
		file, err := MarshalImportFile(n)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		back, err := Load(file)
		if err != nil {
			t.Fatalf("the import file does not load: %v\n%s", err, file)
		}
		n2, _, err := Normalize(back, NormalizeOptions{ConfirmHighRisk: true, Operation: "import"})
		if err != nil {
			t.Fatalf("the import file does not normalise: %v\n%s", err, file)
		}
		if again, _ := MarshalImportFile(n2); !bytes.Equal(again, file) {
			t.Fatalf("the import file is not a fixed point:\n%s\n%s", file, again)
		}
		printed, _ := MarshalAuthoring(RedactSecrets(n))
		rest := printedWithout(n)
		for _, s := range SecretValues(n) {
			if bytes.Contains(printed, []byte(s)) && !bytes.Contains(rest, []byte(s)) && !strings.Contains(redact.Marker, s) {
				t.Fatalf("the printed case holds the secret %q", s)
			}
		}
	})
}

// printedWithout is the printed case with the encrypted steps' params
// dropped: a secret equal to some other text of the case (a name, a key)
// is printed there, not leaked.
func printedWithout(c *Case) []byte {
	out := c.Clone()
	for i := range out.Steps {
		if secretStep(&out.Steps[i]) {
			out.Steps[i].Method.Params = nil
		}
	}
	b, _ := MarshalAuthoring(out)
	return b
}

// FuzzCheckShape: Load refuses with case_schema_violation exactly the
// well-formed documents case.schema.json (compiled by the JSON Schema
// library, the specification) refuses.
func FuzzCheckShape(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := Load(data)
		body := trimBOM(data)
		if CheckJSON(body) != nil {
			return
		}
		doc, derr := canonjson.Decode(body)
		if derr != nil {
			if errorCode(err) != fault.CodeInvalidCaseJSON {
				t.Fatalf("not JSON, yet %v", err)
			}
			return
		}
		refused := errorCode(err) == fault.CodeCaseSchemaViolation
		if accepts := schemaAccepts(t, doc); accepts == refused {
			t.Fatalf("schema accepts=%v, Load: %v for %s", accepts, err, data)
		}
	})
}
