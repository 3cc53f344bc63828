// Package schemas embeds the JSON Schema of every file format and command
// output (`name` is the file name without ".schema.json"; for a command,
// the command name): `solopi schema NAME` prints them. Their compiler and
// the tests' validation helper are in schemas/schematest, so that the
// binary does not carry a JSON Schema compiler it never runs (its package
// initialisation alone cost 3.6 ms of every start).
package schemas

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed *.schema.json
var files embed.FS

// Suffix ends every schema's file name.
const Suffix = ".schema.json"

// Names lists the embedded schemas.
func Names() []string {
	entries, _ := fs.Glob(files, "*"+Suffix)
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e, Suffix))
	}
	sort.Strings(out)
	return out
}

// Raw returns the schema text.
func Raw(name string) ([]byte, error) {
	b, err := files.ReadFile(name + Suffix)
	if err != nil {
		return nil, fmt.Errorf("schema %q: %w", name, err)
	}
	return b, nil
}
