package agent

import (
	"bytes"
	"context"
	"os"
	"path"
	"strings"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/device"
)

// SavedFile is a device evidence file copied to the host.
type SavedFile struct {
	Path       string `json:"path"`
	RemotePath string `json:"remotePath"`
	SHA256     string `json:"sha256"`
	SizeBytes  int64  `json:"sizeBytes"`
}

// checkEvidencePath accepts only files that the session itself published:
// an absolute, clean device path inside agent-sessions/<sessionId>/,
// so a device answer can never make the host pull another session's file or
// anything outside the evidence directory.
func checkEvidencePath(remote, sessionID string, nameOK func(string) bool) error {
	bad := func(why string) error {
		return fault.Newf(fault.Transport, fault.CodeUnsafeEvidencePath, "the device published an evidence path the host will not pull: %s", why).
			With("remotePath", device.Truncate(remote, 300)).With("sessionId", sessionID)
	}
	if !strings.HasPrefix(remote, "/") || path.Clean(remote) != remote {
		return bad("not an absolute clean path")
	}
	dir, name := path.Split(remote)
	if !strings.HasSuffix(dir, "/agent-sessions/"+sessionID+"/") {
		return bad("not inside this session's agent-sessions directory")
	}
	if !nameOK(name) {
		return bad("unexpected file name")
	}
	return nil
}

// CheckOutputPath refuses, before any device work, an output that exists
// (unless overwrite), is a directory or a symlink, or has no parent
// directory (exit 3).
func CheckOutputPath(local string, overwrite bool) error {
	_, err := artifacts.Output{Mode: artifacts.ModeOf(overwrite)}.CheckFile(local)
	return err
}

// pullTo copies remote to local under the output policy: the device's
// SHA-256 is checked by Device.Pull, verify checks the content, and only
// then is the file put in place (never replacing an existing file unless
// overwrite).
func (c *AgentClient) pullTo(ctx context.Context, remote, local string, overwrite bool, verify func([]byte, device.Digest) error) (*SavedFile, error) {
	var dg device.Digest
	abs, err := artifacts.Output{Mode: artifacts.ModeOf(overwrite)}.PublishFile(local, func(f *os.File) error {
		var err error
		if dg, err = c.dev.Pull(ctx, remote, f); err != nil {
			return err
		}
		content, err := artifacts.ReadBack(f)
		if err != nil {
			return fault.Wrap(fault.Invalid, fault.CodeOutputWriteFailed, "cannot read back the pulled file", err)
		}
		return verify(content, dg)
	})
	if err != nil {
		return nil, err
	}
	return &SavedFile{Path: abs, RemotePath: remote, SHA256: dg.SHA256, SizeBytes: dg.Size}, nil
}

// noSecret refuses content that contains the owner token: it must never be
// written to an artifact, even if a device put it there.
func noSecret(token OwnerToken) func([]byte) error {
	return func(b []byte) error {
		if !token.IsZero() && bytes.Contains(b, []byte(token.Reveal())) {
			return fault.New(fault.Transport, fault.CodeOwnerTokenInEvidence, "the device file contains the owner token; it was not written")
		}
		return nil
	}
}

// SaveScreenshot pulls the observation's screenshot to local and checks it
// against both the device's current SHA-256 and the observation's
// screenshotSha256. A screenshotError is reported as it is (exit 2); no
// hash is ever made up.
func (c *AgentClient) SaveScreenshot(ctx context.Context, id AgentIdentity, obs *Observation, local string, overwrite bool) (*SavedFile, error) {
	if obs.ScreenshotError != "" {
		return nil, fault.Newf(fault.Failed, fault.CodeScreenshotUnavailable, "the device has no screenshot for this observation: %s", obs.ScreenshotError).
			With("screenshotError", obs.ScreenshotError).With("observationId", obs.ObservationID)
	}
	if obs.ScreenshotPath == "" || len(obs.ScreenshotSHA256) != 64 {
		return nil, device.ContractError("the observation has neither a screenshot with its SHA-256 nor a screenshotError", obs.Summary())
	}
	if err := checkEvidencePath(obs.ScreenshotPath, id.SessionID, func(n string) bool {
		return strings.HasPrefix(n, "observation-") && strings.HasSuffix(n, ".png")
	}); err != nil {
		return nil, err
	}
	secret := noSecret(id.OwnerToken)
	return c.pullTo(ctx, obs.ScreenshotPath, local, overwrite, func(b []byte, dg device.Digest) error {
		if !strings.EqualFold(dg.SHA256, obs.ScreenshotSHA256) {
			return fault.New(fault.Transport, fault.CodeTransferDigestMismatch, "the pulled screenshot's SHA-256 differs from the observation's screenshotSha256").
				With("expectedSha256", obs.ScreenshotSHA256).With("actualSha256", dg.SHA256).With("remotePath", obs.ScreenshotPath)
		}
		return secret(b)
	})
}

// SavedTimeline is a pulled timeline.jsonl and its check.
type SavedTimeline struct {
	SavedFile
	Check TimelineCheck `json:"check"`
}

// SaveTimeline pulls the session's timeline.jsonl (SHA-256 checked) to
// local and checks its events.
func (c *AgentClient) SaveTimeline(ctx context.Context, id AgentIdentity, timelinePath, local string, overwrite bool) (*SavedTimeline, error) {
	if err := checkEvidencePath(timelinePath, id.SessionID, func(n string) bool { return n == "timeline.jsonl" }); err != nil {
		return nil, err
	}
	var events []AgentEvent
	secret := noSecret(id.OwnerToken)
	f, err := c.pullTo(ctx, timelinePath, local, overwrite, func(b []byte, _ device.Digest) error {
		if err := secret(b); err != nil {
			return err
		}
		evs, err := parseTimelineJSONL(bytes.NewReader(b))
		if err != nil {
			return err
		}
		events = evs
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &SavedTimeline{SavedFile: *f, Check: checkTimeline(events, id.SessionID)}, nil
}
