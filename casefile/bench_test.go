package casefile

import (
	"fmt"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/casefile/paramcrypt"
)

// benchCase is a recorded-size case: n INPUT steps with nodes and params.
func benchCase(n int) []byte {
	steps := make([]string, n)
	for i := range steps {
		steps[i] = fmt.Sprintf(`{"stepId":"s%d","operationId":"o","operationIndex":%d,"operationMethod":{"actionEnum":"INPUT","encrypt":true,"operationParam":{"text":%q,"localClickPos":"0.5,0.5"}},"operationNode":{"resourceId":"com.example:id/field_%d","text":"","xpath":"/android.widget.FrameLayout/android.widget.LinearLayout/android.widget.EditText[%d]","className":"android.widget.EditText","depth":9,"nodeBound":{"left":0,"top":0,"right":100,"bottom":50}}}`,
			i, i, paramcrypt.Encrypt(paramcrypt.DefaultSeed, fmt.Sprintf("value %d", i)), i, i)
	}
	return []byte(`{"caseName":"bench","targetAppPackage":"com.example","operationLog":{"steps":[` + strings.Join(steps, ",") + `]}}`)
}

// BenchmarkParse measures the whole host parse (decode, CheckJSON, build)
// of a 200-step case; BenchmarkCheckJSON the UTF-8 and duplicate-key check
// alone, to show what it adds.
func BenchmarkParse(b *testing.B) {
	data := benchCase(200)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheckJSON(b *testing.B) {
	data := benchCase(200)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := CheckJSON(data); err != nil {
			b.Fatal(err)
		}
	}
}
