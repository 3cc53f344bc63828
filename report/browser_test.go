package report

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/internal/browsertest"
	"github.com/solopi-dev/solopi/internal/counterphone"
)

// TestReportsInChromium opens every kind of report in headless Chromium,
// at a desktop and a phone size: the verdict and the failing step or
// checkpoint are visible, every image loads, no request leaves the
// evidence directory and no script runs (hostile names stay text).
func TestReportsInChromium(t *testing.T) {
	t.Parallel()
	browser := browsertest.Start(t)
	cases := []struct {
		name, dir, verdict string
		// failing is a selector of the element that names the failure and
		// a text it must show.
		failing, failingText string
	}{
		{"run", copyTestdata(t, "run-failed"), "failed", "#failing-step", "expect-four"},
		{"batch", copyTestdata(t, "batch-stopped"), "failed", "tr.failed", "counter-<script>alert(1)</script>-four"},
		{"verify-run", copyTestdata(t, "verify-run"), "failed", "#checkpoint-value-four", "oracle_mismatch"},
		{"perf", copyTestdata(t, "perf"), "descriptive", "#statistics", "FPS"},
		{"run-perf", copyTestdata(t, "run-perf"), "failed", "#budgets", "memory.max=50"},
		{"agent-run", agentRun(t, "increase the counter to 2", counterphone.RunOptions{}), "completed", "#step-1", "Step 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res, err := Write(c.dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, size := range []struct {
				name string
				w, h int64
			}{{"desktop", 1280, 900}, {"phone", 390, 844}} {
				p := browsertest.Open(t, browser, "file://"+filepath.ToSlash(res.Path), size.w, size.h)
				verdict := browsertest.Eval[string](t, p, `document.querySelector('#verdict .verdict-word').innerText`)
				if !strings.EqualFold(verdict, c.verdict) {
					t.Errorf("%s: verdict %q, want %q", size.name, verdict, c.verdict)
				}
				visible := browsertest.Eval[bool](t, p, `(() => { const e = document.querySelector('#verdict'); const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 && r.top < innerHeight })()`)
				if !visible {
					t.Errorf("%s: the verdict banner is not in the first screen", size.name)
				}
				text := browsertest.Eval[string](t, p, `(document.querySelector(`+jsString(c.failing)+`) || {innerText: ''}).innerText`)
				if !strings.Contains(text, c.failingText) {
					t.Errorf("%s: %s shows %q, want %q", size.name, c.failing, text, c.failingText)
				}
				if n := browsertest.Eval[int](t, p, `document.images.length`); n == 0 {
					t.Errorf("%s: no image on the page", size.name)
				}
				if broken := browsertest.BrokenImages(t, p); len(broken) > 0 {
					t.Errorf("%s: images that did not load: %v", size.name, broken)
				}
				if n := browsertest.Eval[int](t, p, `document.scripts.length`); n != 0 {
					t.Errorf("%s: %d script elements", size.name, n)
				}
				if title := browsertest.Eval[string](t, p, `document.title`); strings.Contains(title, "pwned") {
					t.Errorf("%s: a hostile text ran as script", size.name)
				}
				if wide := browsertest.Eval[bool](t, p, `document.documentElement.scrollWidth > innerWidth + 1`); wide {
					t.Errorf("%s: the page is wider than the window", size.name)
				}
				browsertest.Screenshot(t, p, "report-"+c.name+"-"+size.name)
				if out := p.RequestsOutside(c.dir); len(out) > 0 {
					t.Errorf("%s: requests outside the evidence directory: %v", size.name, out)
				}
			}
		})
	}
}

func jsString(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }
