package cmdutil

import (
	"context"
	"os"
	"path/filepath"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/perfstats"
	"github.com/solopi-dev/solopi/report"
)

// EnsurePerfAnalysis analyses a perf-stop --output directory that has
// only its CSV files: the statistics go to analysis.json, the charts to
// charts/, as perf-analyze would write them.
func EnsurePerfAnalysis(ctx context.Context, dir string) error {
	path := filepath.Join(dir, report.PerfAnalysisFile)
	if _, err := os.Lstat(path); err == nil {
		return nil // already analysed (or not a plain file: Write reports it)
	}
	a, err := perfstats.AnalyzePerformance(ctx, perfstats.PerfAnalyzeOptions{Input: dir, Output: filepath.Join(dir, "charts"), Overwrite: true})
	if err != nil {
		return err
	}
	return SavePerfAnalysis(dir, a)
}

// SavePerfAnalysis writes a into dir as the analysis the report reads.
func SavePerfAnalysis(dir string, a *perfstats.PerfAnalysis) error {
	path := filepath.Join(dir, report.PerfAnalysisFile)
	b, err := artifacts.MarshalIndent(a)
	if err != nil {
		return fault.Wrap(fault.Internal, fault.CodeReportWriteFailed, "cannot encode the performance analysis", err)
	}
	_, err = (artifacts.Output{Mode: artifacts.Exclusive}).WriteFile(path, b)
	return err
}

// EvidenceReport is where a command wrote the report of its evidence
// directory, or why it could not: the evidence stands without it, so a
// failed report does not fail the command.
type EvidenceReport struct {
	Report      string `json:"report,omitempty"`
	ReportError string `json:"reportError,omitempty"`
}

// ReportOf writes dir/report.html unless err (from preparing the
// evidence) already says why not.
func ReportOf(dir string, o report.Options, err error) EvidenceReport {
	if err == nil {
		var res report.Result
		if res, err = report.Write(dir, o); err == nil {
			return EvidenceReport{Report: res.Path}
		}
	}
	return EvidenceReport{ReportError: err.Error()}
}
