package casefile

import (
	"slices"
	"testing"
)

// A recorded-style case: encrypted steps (explicitly, and by the absent
// flag) with the AES vectors, a plain step, and an encrypted value that
// does not decrypt (the device then uses it as stored).
var secretCase = caseWith(`[
 {"stepId":"a","operationMethod":{"actionEnum":"INPUT","encrypt":true,"operationParam":{"text":"70E64B6009261E23085996D7F3785F4C","localClickPos":"A3B7B9427C4ABA1306B67EE0A2B330FC"}},"operationNode":` + nodeJSON + `},
 {"stepId":"b","operationMethod":{"actionEnum":"ASSERT","operationParam":{"assertMode":"734004355480DBF845632F90FC02B32D","assertInputContent":"hunter2!","extra":null}},"operationNode":` + nodeJSON + `},
 {"stepId":"c","operationMethod":{"actionEnum":"SLEEP","encrypt":true,"operationParam":{"text":"DF4287CE5CF1D64E46B63D442C8F898E"}}},
 {"stepId":"d","operationMethod":{"actionEnum":"INPUT","encrypt":false,"operationParam":{"text":"public text"}},"operationNode":` + nodeJSON + `}
]`)

func TestEncryptedAndInputParams(t *testing.T) {
	t.Parallel()
	c := mustParse(t, secretCase)
	want := []ParamRef{{"a", "localClickPos"}, {"a", "text"}, {"b", "assertInputContent"}, {"b", "assertMode"}, {"b", "extra"}, {"c", "text"}}
	if got := EncryptedParams(c); !slices.Equal(got, want) {
		t.Fatalf("encrypted params = %v, want %v", got, want)
	}
	// Normalisation writes the absent flag as false, as the import sends it:
	// then only the steps that say encrypt:true are encrypted on the device.
	n, _, err := Normalize(c, NormalizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want = []ParamRef{{"a", "localClickPos"}, {"a", "text"}, {"c", "text"}}
	if got := EncryptedParams(n); !slices.Equal(got, want) {
		t.Fatalf("normalised encrypted params = %v, want %v", got, want)
	}
	// Input-bearing params: what is typed and what is asserted, never the
	// SLEEP duration.
	want = []ParamRef{{"a", "text"}, {"b", "assertInputContent"}, {"d", "text"}}
	if got := InputParams(c); !slices.Equal(got, want) {
		t.Fatalf("input params = %v, want %v", got, want)
	}
}

func TestParamValues(t *testing.T) {
	t.Parallel()
	// The device's snapshot: decrypted, encrypt:false everywhere; the
	// refs say which values were secret.
	snap := mustParse(t, caseWith(`[
 {"stepId":"a","operationMethod":{"actionEnum":"INPUT","encrypt":false,"operationParam":{"text":"WLAN","localClickPos":"0.5,0.5"}},"operationNode":`+nodeJSON+`},
 {"stepId":"b","operationMethod":{"actionEnum":"INPUT","encrypt":false,"operationParam":{"text":"WLAN"}},"operationNode":`+nodeJSON+`},
 {"stepId":"c","operationMethod":{"actionEnum":"SLEEP","encrypt":false,"operationParam":{"text":"2000"}}},
 {"stepId":"d","operationMethod":{"actionEnum":"INPUT","encrypt":false,"operationParam":{"text":""}},"operationNode":`+nodeJSON+`}
]`))
	got := ParamValues(snap, []ParamRef{{"a", "text"}, {"b", "text"}, {"c", "text"}, {"d", "text"}, {"gone", "text"}})
	if want := []string{"2000", "WLAN"}; !slices.Equal(got, want) {
		t.Fatalf("values = %q, want %q", got, want)
	}
	if got := ParamValues(snap, nil); len(got) != 0 {
		t.Fatalf("no refs: %q", got)
	}
}
