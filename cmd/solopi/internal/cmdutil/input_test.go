package cmdutil

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/solopi-dev/solopi/fault"
)

// ReadInput is artifacts.Input with the commands' code and field: a
// missing file and a directory are refused as file_unreadable (exit 3)
// naming the file; a regular file is read whole.
func TestReadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.json")
	os.WriteFile(plan, []byte(`{}`), 0o600)
	if b, err := ReadInput(plan, "plan"); err != nil || string(b) != `{}` {
		t.Fatalf("%q %v", b, err)
	}
	for _, path := range []string{filepath.Join(dir, "absent.json"), dir} {
		_, err := ReadInput(path, "plan")
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Code != fault.CodeFileUnreadable || fe.Kind != fault.Invalid || fe.Details["file"] != path {
			t.Fatalf("%s: %#v", path, err)
		}
	}
}
