package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
)

// fakeModelMode is the value of `sim serve --fake-model[=MODE]`. It is a
// boolean flag to the flag parser, so the bare --fake-model (the form
// older scripts use) means the default mode, and --fake-model=MODE picks
// a provider behaviour.
type fakeModelMode struct{ mode string }

func (f *fakeModelMode) String() string {
	if f == nil {
		return ""
	}
	return f.mode
}

func (f *fakeModelMode) Set(v string) error {
	switch v {
	case "true":
		f.mode = fakemodel.ProviderOpenAI
	case "false":
		f.mode = ""
	default:
		if !slices.Contains(fakemodel.Providers(), v) {
			return fmt.Errorf("unknown fake model mode %q (want one of %s)", v, strings.Join(fakemodel.Providers(), ", "))
		}
		f.mode = v
	}
	return nil
}

// IsBoolFlag lets the bare --fake-model stand alone.
func (f *fakeModelMode) IsBoolFlag() bool { return true }

// fakeModelUsage is the --fake-model help text.
func fakeModelUsage() string {
	return "also serve a local fake vision model for agent-run (it reads the simulator's pixels); --fake-model alone is the " +
		fakemodel.ProviderOpenAI + " mode, --fake-model=MODE behaves like another provider: " + strings.Join(fakemodel.Providers(), ", ")
}

// simFakeModelEnv is what to export so that solopi talks to the fake model
// in its mode (space-separated assignments). Azure mode also needs any
// non-empty SOLOPI_MODEL_API_KEY, which is not printed.
func simFakeModelEnv(fm *fakemodel.Server) string {
	env := []string{chat.EnvModelBaseURL + "=" + fm.URL}
	switch fm.Provider() {
	case fakemodel.ProviderStreamOnly:
		env = append(env, chat.EnvModelStream+"=1")
	case fakemodel.ProviderAzure:
		env = append(env, chat.EnvModelAPIStyle+"="+chat.APIStyleAzure, chat.EnvModelAPIVersion+"="+fakemodel.AzureAPIVersion)
	}
	return strings.Join(env, " ")
}
