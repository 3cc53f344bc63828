package replay

import (
	"strings"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/perfstats"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/video"
)

// RunOptions configure RunReplay (the `run` command).
type RunOptions struct {
	CaseName      string
	TargetPackage string
	// RestartApp is nil to keep the device's KEY_RESTART_APP_ON_PLAY.
	RestartApp *bool
	AckTimeout time.Duration // default 15 s
	RunTimeout time.Duration // default 600 s
	// PollInterval is the longest pause between status polls (default
	// 1 s). A started run is polled at least every replayPoll (50 ms), so
	// its terminal state is reported within tens of milliseconds of the
	// device publishing it.
	PollInterval    time.Duration
	NoWait          bool
	NoAutoStart     bool
	ConfirmHighRisk bool
	// ArtifactsDir, when set, receives the evidence (checked before any
	// device contact).
	ArtifactsDir string
	Overwrite    bool
	// CancelWait bounds the wait for `cancelled` after a timeout or an
	// interrupt (default 5 s).
	CancelWait time.Duration
	// UnreachableTimeout is how long a started run keeps polling a
	// control service it cannot reach (SoloPi's HTTP server comes back 5 s
	// after an app restart; adb reconnects) before it ends as a transport
	// failure (default 30 s).
	UnreachableTimeout time.Duration
	// EvidenceTimeout bounds each evidence item on its own (the
	// screenshot, the logcat, each device file, the device description);
	// the items are collected at the same time (default 10 s).
	EvidenceTimeout time.Duration
	// LogcatLines bounds logcat.txt (default 5000 lines, 8 MiB).
	LogcatLines int
	// Secrets holds case-import's records of encrypted parameters (the
	// zero store has none: input-bearing parameters are then redacted).
	Secrets SecretsStore
	// Encrypted, when not nil, says exactly which parameters of the case
	// are secret: a caller that wrote the case itself (verify-run's
	// compiled cases, which encrypt nothing) knows better than any record.
	Encrypted *[]casefile.ParamRef
	// CaseFingerprint, when set, binds the run to that caseFingerprint
	// (the import the caller checked): another version of the case on
	// the device is refused before the start (case_changed).
	CaseFingerprint string
	Progress        device.Progress
	// Video records the screen with adb's screenrecord from just before
	// the start to the run's end (off, the default, records nothing);
	// on-failure keeps it only when the verdict is not passed. It needs
	// ArtifactsDir and never changes the verdict.
	Video        video.Mode
	VideoOptions video.Options
	// Perf records these SoloPi performance items (perf-list's keys) in a
	// performance session from just before the start to the run's end,
	// stopped by its sessionId on every ending; the CSVs, their analysis
	// and charts go to perf/ of the evidence. It needs ArtifactsDir.
	Perf []string
	// PerfBudget judges the recording: an exceeded budget fails a passed
	// replay (perf_budget_exceeded), an unmeasured one makes it not tested
	// (perf_not_measured). It needs Perf.
	PerfBudget []perfstats.Budget
	// PerfSessions drives the recording (sessions.PerfRecorder); required
	// with Perf.
	PerfSessions PerfSessions
}

func (o *RunOptions) defaults() {
	if o.AckTimeout <= 0 {
		o.AckTimeout = 15 * time.Second
	}
	if o.RunTimeout <= 0 {
		o.RunTimeout = 600 * time.Second
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	if o.CancelWait <= 0 {
		o.CancelWait = 5 * time.Second
	}
	if o.UnreachableTimeout <= 0 {
		o.UnreachableTimeout = 30 * time.Second
	}
	if o.EvidenceTimeout <= 0 {
		o.EvidenceTimeout = 10 * time.Second
	}
	if o.LogcatLines <= 0 {
		o.LogcatLines = 5000
	}
}

// Validate checks the options that need no device.
func (o *RunOptions) Validate() error { return o.validate(o.ArtifactsDir != "") }

// ValidateSubRun checks the options of a batch's or a suite's sub-run,
// whose evidence directory is made later under the root: evidence says
// whether there is one (--video and --perf need it).
func (o *RunOptions) ValidateSubRun(evidence bool) error {
	c := *o
	c.ArtifactsDir = ""
	return c.validate(evidence)
}

func (o *RunOptions) validate(evidence bool) error {
	if strings.TrimSpace(o.CaseName) == "" {
		return fault.Usage(fault.CodeInvalidOption, "--case must name a SoloPi case")
	}
	if o.TargetPackage != "" && !protocol.ValidPackageName(o.TargetPackage) {
		return fault.Usage(fault.CodeInvalidOption, "--target-package must look like com.example.app")
	}
	if _, ok := video.ParseMode(string(o.Video)); !ok {
		return fault.Usage(fault.CodeInvalidOption, "--video must be off, on-failure or always")
	}
	if o.Video != "" && o.Video != video.ModeOff && !evidence {
		return fault.Usage(fault.CodeInvalidOption, "--video needs --artifacts (the recording is evidence)")
	}
	if err := o.checkPerf(evidence); err != nil {
		return err
	}
	if o.ArtifactsDir != "" {
		if err := artifacts.Check(o.ArtifactsDir, artifacts.EvidenceModeOf(o.Overwrite)); err != nil {
			return err
		}
	}
	return nil
}
