package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkStartup runs the built binary for commands that only print
// (`version`, `--help`) and, for comparison, an empty Go program built the
// same way: the difference is what solopi's own start-up costs (package
// initialisation, command table) on this machine.
//
//	go test -run '^$' -bench Startup ./cmd/solopi/
func BenchmarkStartup(b *testing.B) {
	empty := filepath.Join(b.TempDir(), "empty")
	src := filepath.Join(b.TempDir(), "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() {}\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	if out, err := exec.Command("go", "build", "-o", empty, src).CombinedOutput(); err != nil {
		b.Fatalf("build the empty program: %v\n%s", err, out)
	}
	// The released binary, not this test binary the other tests run as
	// solopi: its start-up is what users wait for.
	solopi := filepath.Join(b.TempDir(), "solopi")
	if out, err := exec.Command("go", "build", "-o", solopi, ".").CombinedOutput(); err != nil {
		b.Fatalf("build solopi: %v\n%s", err, out)
	}
	for _, c := range []struct {
		name string
		argv []string
	}{
		{"version", []string{solopi, "version"}},
		{"help", []string{solopi, "--help"}},
		{"empty-go-program", []string{empty}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				cmd := exec.Command(c.argv[0], c.argv[1:]...)
				if err := cmd.Run(); err != nil {
					b.Fatalf("%v: %v", c.argv, err)
				}
			}
		})
	}
}
