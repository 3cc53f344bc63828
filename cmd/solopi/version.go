package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/protocol"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

type versionResult struct {
	Success   bool              `json:"success"`
	Version   string            `json:"version"`
	Revision  string            `json:"revision"`
	Modified  bool              `json:"modified"`
	GoVersion string            `json:"goVersion"`
	Platform  string            `json:"platform"`
	Protocols map[string]string `json:"protocols"`
}

// versionLine is what `solopi --version` prints after "solopi version ".
func versionLine() string {
	v := versionInfo()
	return fmt.Sprintf("%s (revision %s, %s, %s)", v.Version, v.Revision, v.GoVersion, v.Platform)
}

func versionInfo() versionResult {
	r := versionResult{
		Success:   true,
		Version:   version,
		Revision:  "unknown",
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
		Protocols: map[string]string{"harness": protocol.HarnessProtocolVersion, "agent": protocol.AgentProtocolVersion},
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				r.Revision = s.Value
			case "vcs.modified":
				r.Modified = s.Value == "true"
			}
		}
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" && version == "0.1.0-dev" {
			r.Version = bi.Main.Version
		}
	}
	return r
}

func newCmdVersion(e cmdutil.Env) *cli.Command {
	return &cli.Command{
		Name:      "version",
		Usage:     "print the binary version, VCS revision, Go version and protocol versions",
		UsageText: "solopi version",
		Action: cmdutil.Local(e, func(context.Context, *cmdutil.Globals) (cmdutil.Result, error) {
			return cmdutil.OK(versionInfo()), nil
		}),
	}
}
