package appspec

import (
	"embed"
	"fmt"
	"path"
	"sort"
)

//go:embed apps/*.json
var embeddedApps embed.FS

// DefaultApps parses the embedded app specs (launcher, counter, login,
// list, settings, SoloPi, keyboards, system UI). Each call returns fresh
// copies, so callers may modify them.
func DefaultApps() []*AppSpec {
	entries, err := embeddedApps.ReadDir("apps")
	if err != nil {
		panic(fmt.Sprintf("embedded apps: %v", err)) // build-time data; cannot fail at run time
	}
	var out []*AppSpec
	for _, e := range entries {
		data, err := embeddedApps.ReadFile(path.Join("apps", e.Name()))
		if err != nil {
			panic(fmt.Sprintf("embedded app %s: %v", e.Name(), err))
		}
		spec, err := LoadApp(data)
		if err != nil {
			panic(fmt.Sprintf("embedded app %s: %v", e.Name(), err)) // covered by TestEmbeddedAppsLoad
		}
		out = append(out, spec)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Package < out[j].Package })
	return out
}
