package android

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/solopi-dev/solopi/sim/android/appspec"
	"github.com/solopi-dev/solopi/sim/android/ui"
)

// FuzzLoadApp checks that the spec loader never panics and that whatever
// it accepts is a fixed point: marshalling a loaded spec and loading it
// again gives the same spec, and a phone can render it.
func FuzzLoadApp(f *testing.F) {
	for _, s := range appspec.DefaultApps() {
		b, err := json.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := appspec.LoadApp(data)
		if err != nil {
			return
		}
		b, err := json.Marshal(spec)
		if err != nil {
			t.Fatalf("marshal accepted spec: %v", err)
		}
		again, err := appspec.LoadApp(b)
		if err != nil {
			t.Fatalf("reload of a normalized spec failed: %v\n%s", err, b)
		}
		// Compare the serialized forms: [] and nil slices are the same spec.
		b2, _ := json.Marshal(again)
		if !bytes.Equal(b, b2) {
			t.Fatalf("normalization is not idempotent:\n%s\n%s", b, b2)
		}
		if len(data) > 4096 {
			return // keep the per-input cost small
		}
		p := New(Config{Apps: []*appspec.AppSpec{spec}}, nil)
		if spec.LauncherActivity != "" {
			if err := p.LaunchApp(spec.Package); err != nil {
				t.Fatalf("launch: %v", err)
			}
			for _, w := range p.Windows() {
				w.Root.Walk(func(n *ui.Node) bool {
					if n.Bounds.Empty() {
						t.Fatalf("exported an empty node %+v", n)
					}
					return true
				})
			}
			_ = p.Tap(540, 1200)
			_ = p.Swipe(540, 2000, 540, 500, 0)
		}
	})
}
