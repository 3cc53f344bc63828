package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The verification page puts timeline.json on its segments: each
// segment's start and duration, an explore segment's Agent actions with
// theirs; with a kept recording the player and, on every time, a link
// that seeks it.
func TestVerifyReportTimeline(t *testing.T) {
	t.Parallel()
	b, _, err := render(filepath.Join("testdata", "verify-run"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, want := range []string{`<section class="agent-steps">`, `<b>explore-click-001</b> click`, "after the run's start"} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(html, "<video") || strings.Contains(html, `class="seek"`) {
		t.Error("a run without a recording shows a player or seek links")
	}

	dir := copyTestdataTo(t, "verify-run", filepath.Join(t.TempDir(), "v"))
	var tl map[string]any
	raw, err := os.ReadFile(filepath.Join(dir, "timeline.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &tl); err != nil {
		t.Fatal(err)
	}
	tl["videos"] = []any{map[string]any{"mode": "always", "kept": true, "parts": 1, "durationMs": 9000, "offsetMs": 0, "files": []any{map[string]any{"path": "video.mp4"}}}}
	for _, s := range tl["segments"].([]any) {
		seg := s.(map[string]any)
		seg["video"] = map[string]any{"file": "video.mp4", "seconds": float64(seg["offsetMs"].(float64)) / 1000}
		for _, st := range seg["steps"].([]any) {
			st.(map[string]any)["video"] = map[string]any{"file": "video.mp4", "seconds": 2.5}
		}
	}
	raw, _ = json.Marshal(tl)
	for name, b := range map[string][]byte{"timeline.json": raw, "video.mp4": {0}} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, _, err = render(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	html = string(b)
	for _, want := range []string{`<video controls preload="metadata" src="video.mp4">`, `<a class="seek" href="video.mp4#t=2.5">`, `<a class="seek" href="video.mp4#t=0.0">`, "media-src 'self'"} {
		if !strings.Contains(html, want) {
			t.Errorf("the page with a recording lacks %s", want)
		}
	}
}
