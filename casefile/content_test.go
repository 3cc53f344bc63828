package casefile

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/solopi-dev/solopi/casefile/paramcrypt"
)

// A case file and the device's read-back of its import (as Snapshot
// renders it, with an id and times) have one content fingerprint; an edit
// changes it.
func TestContentFingerprintMatchesTheReadBack(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"testdata/settings-search-wlan.json", "testdata/counter-increment.authoring.json"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		n, _, err := Normalize(c, NormalizeOptions{ConfirmHighRisk: true})
		if err != nil {
			t.Fatal(err)
		}
		local, err := ContentFingerprint(n, paramcrypt.DefaultSeed)
		if err != nil || len(local) != 64 {
			t.Fatalf("%s: %q %v", f, local, err)
		}
		stored := ApplyDeviceImportDefaults(n, 41, 1_700_000_000_000)
		snap, err := Snapshot(stored, paramcrypt.DefaultSeed)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(snap)
		back, err := Parse(b)
		if err != nil {
			t.Fatalf("%s: read-back: %v", f, err)
		}
		remote, err := ContentFingerprint(back, paramcrypt.DefaultSeed)
		if err != nil || remote != local {
			t.Fatalf("%s: read-back %s, file %s (%v)", f, remote, local, err)
		}
		if remote == snap.CaseFingerprint {
			t.Errorf("%s: the content fingerprint carries the device identity", f)
		}
		edited := n.Clone()
		edited.CaseDesc += " (edited)"
		if other, _ := ContentFingerprint(edited, paramcrypt.DefaultSeed); other == local {
			t.Errorf("%s: an edit kept the fingerprint", f)
		}
	}
}
