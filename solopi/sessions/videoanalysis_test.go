package sessions

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/sim/soloapp/media"
	"github.com/solopi-dev/solopi/sim/soloapp/plugins"
)

const testVideo = "/sdcard/solopi/ScreenCaptures/Screen-20260101-120000-720x480.mp4"

// videoPhone is a phone with a screen recording in SoloPi's captures.
func videoPhone(t *testing.T) *simPhone {
	f := newSimPhone(t)
	mp4, err := media.BuildMP4(720, 480, 3000)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.dev.Push(context.Background(), bytes.NewReader(mp4), testVideo, 0o644, time.Time{}); err != nil {
		t.Fatal(err)
	}
	return f
}

func videoOpts(wait bool) VideoAnalysisOptions {
	return VideoAnalysisOptions{VideoPath: testVideo, ActionOffsetMs: 1500, DifferenceThreshold: 0.02, Wait: wait,
		AckTimeout: ssFast.Timeout, AnalysisTimeout: ssFast.Timeout, Interval: ssFast.Interval}
}

func TestVideoAnalysisCompletes(t *testing.T) {
	t.Parallel()
	f := videoPhone(t)
	res, err := ssOut(StartVideoAnalysis(context.Background(), f.device(), videoOpts(true)))
	m := ssExpect(t, "video-analysis-start", res, err, passed)
	if ms, _ := m["visualResponseTimeMs"].(float64); m["state"] != "completed" || ms <= 0 || m["actionOffsetMs"] != float64(1500) {
		t.Fatalf("analysis = %v", m)
	}
	id := m["requestId"].(string)
	if f.mutationCount("action=start", "requestId="+id, "actionOffsetMs=1500", "differenceThreshold=0.02", "videoPath=%2Fsdcard%2Fsolopi%2FScreenCaptures") != 1 {
		t.Fatalf("start mutation = %v", f.dev.Mutations())
	}
	res, err = ssOut(VideoAnalysisStatus(context.Background(), f.device(), id))
	ssExpect(t, "video-analysis-status", res, err, passed)
}

func TestVideoAnalysisSecondWhileOneRunsIsAStoredFailure(t *testing.T) {
	t.Parallel()
	f := videoPhone(t)
	f.dev.App.SetVideoAnalysisDuration(time.Hour)
	res, err := ssOut(StartVideoAnalysis(context.Background(), f.device(), videoOpts(false)))
	first := ssExpect(t, "video-analysis-start", res, err, passed)
	if first["state"] != "analyzing" {
		t.Fatalf("--no-wait = %v", first)
	}
	res, err = ssOut(StartVideoAnalysis(context.Background(), f.device(), videoOpts(true)))
	m := ssExpect(t, "video-analysis-start", res, err, fault.Failed)
	ssWantCode(t, m, "analysis_busy")
	if m["activeRequestId"] != first["requestId"] || m["requestId"] == first["requestId"] {
		t.Fatalf("busy receipt = %v", m)
	}
	// The stored failure stays readable under its own requestId.
	res, err = ssOut(VideoAnalysisStatus(context.Background(), f.device(), m["requestId"].(string)))
	ssWantCode(t, ssExpect(t, "video-analysis-status", res, err, fault.Failed), "analysis_busy")
}

func TestVideoAnalysisRejections(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t) // no MP4 on the device
	res, err := ssOut(StartVideoAnalysis(context.Background(), f.device(), videoOpts(true)))
	ssWantCode(t, ssExpect(t, "video-analysis-start", res, err, fault.Failed), "invalid_parameter")

	g := videoPhone(t)
	if err := g.dev.App.UninstallPlugin(plugins.AnalyzerPluginName); err != nil {
		t.Fatal(err)
	}
	res, err = ssOut(StartVideoAnalysis(context.Background(), g.device(), videoOpts(true)))
	ssWantCode(t, ssExpect(t, "video-analysis-start", res, err, fault.Failed), "plugin_missing")
	res, err = ssOut(VideoAnalysisStatus(context.Background(), g.device(), "never-started"))
	ssWantCode(t, ssExpect(t, "video-analysis-status", res, err, fault.Failed), "analysis_not_found")

	for _, p := range []string{"relative/ScreenCaptures/a.mp4", "/sdcard/solopi/Download/a.mp4", "/sdcard/ScreenCaptures/a.mp4",
		"/sdcard/solopi/ScreenCaptures/../a.mp4", "/sdcard/solopi/ScreenCaptures/a.mov", "/data/local/tmp/x/ScreenCaptures/a.mp4",
		"/storage/emulated/x/solopi/ScreenCaptures/a.mp4", "/sdcard/solopi/ScreenCaptures/.a.mp4"} {
		o := videoOpts(true)
		o.VideoPath = p
		if e := fault.From(o.Validate()); o.Validate() == nil || e.Kind != fault.Invalid {
			t.Errorf("video path %q accepted", p)
		}
	}
	for _, ok := range []string{testVideo, "/storage/emulated/0/solopi/ScreenCaptures/a.mp4"} {
		if err := checkVideoPath(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	o := videoOpts(true)
	o.DifferenceThreshold = 0
	if o.Validate() == nil {
		t.Errorf("threshold 0 accepted")
	}
	if formatThreshold(0.1+0.2) != "0.3" {
		t.Errorf("FormatThreshold(0.1+0.2) = %s", formatThreshold(0.1+0.2))
	}
}

func TestVideoAnalysisReceiptValidator(t *testing.T) {
	t.Parallel()
	meta := `"requestId":"r1","videoFileName":"a.mp4","videoPath":"/sdcard/solopi/ScreenCaptures/a.mp4","sizeBytes":9,"actionOffsetMs":1,"differenceThreshold":0.5,"startedAt":3`
	// Another request's receipt never gets here: device.ReadReceipt refuses it.
	ssValidatorCases(t, validateAnalysisReceipt, []ssCase{
		{"analyzing", `{"success":true,"state":"analyzing","terminal":false,` + meta + `}`, true},
		{"completed", `{"success":true,"state":"completed","terminal":true,"completedAt":5,"visualResponseTimeMs":3,"measurement":"SoloPi screen-recording video difference",` + meta + `}`, true},
		{"completed without time", `{"success":true,"state":"completed","terminal":true,"completedAt":5,"measurement":"SoloPi screen-recording video difference",` + meta + `}`, false},
		{"failed success true", `{"success":true,"state":"failed","terminal":true,"completedAt":5,"errorCode":"analysis_failed","error":"x",` + meta + `}`, false},
		{"terminal without completedAt", `{"success":false,"state":"failed","terminal":true,"errorCode":"analysis_failed","error":"x",` + meta + `}`, false},
		{"error receipt", `{"success":false,"errorCode":"plugin_missing","error":"x","requestId":"r1"}`, true},
		{"unknown code", `{"success":false,"errorCode":"made_up","error":"x","requestId":"r1"}`, false},
		{"missing metadata", `{"success":true,"state":"analyzing","terminal":false,"requestId":"r1"}`, false},
	})
}
