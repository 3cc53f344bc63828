package cmdtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/schemas/schematest"
)

// Manifest reads dir's manifest.json, validated against its schema.
func Manifest(t testing.TB, dir string) artifacts.Manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, artifacts.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate(t, "artifacts-manifest", b)
	var m artifacts.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
