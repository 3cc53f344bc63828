package replaycmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/internal/browsertest"
)

// Two suites into one artifacts root: ROOT/report.html lists both, newest
// first, with their counts; the batch report shows a timeline per phone,
// the attempts of the flaky case side by side with its marker, the
// history strip, filters by verdict (CSS) and a search by name, readable
// at phone width, with no request leaving the root. `solopi report ROOT`
// rewrites them all.
func TestSuiteReportAndIndexInChromium(t *testing.T) {
	t.Parallel()
	c, f := farmCLI(t, 2)
	dir := t.TempDir()
	for _, n := range []string{"login-ok", "search-ok", "cart-ok"} {
		if err := os.WriteFile(filepath.Join(dir, n+".json"), []byte(cmdtest.Renamed(n)(cmdtest.DemoCase(t))), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	broken := strings.Replace(cmdtest.Renamed("pay-broken")(cmdtest.DemoCase(t)), `"assertInputContent": "3"`, `"assertInputContent": "4"`, 1)
	if err := os.WriteFile(filepath.Join(dir, "pay-broken.json"), []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	c.Expect(2, "run-batch", append([]string{"run-batch", "--dir", dir, "--devices", "all", "--artifacts", root}, fast...)...)
	for _, d := range f.Devices() {
		if err := d.App.FailReplays("login-ok", 1); err != nil {
			t.Fatal(err)
		}
	}
	m := c.Expect(2, "run-batch", append([]string{"run-batch", "--dir", dir, "--devices", "all", "--retries", "1", "--artifacts", root}, fast...)...)
	index, batch := str(m, "index"), str(m, "report")
	if index != filepath.Join(root, "report.html") || batch == "" {
		t.Fatalf("reports: %v", m)
	}
	flaky := ""
	for _, r := range m["results"].([]any) {
		if r := r.(map[string]any); r["caseName"] == "login-ok" {
			flaky = str(r, "verdict")
		}
	}
	browser := browsertest.Start(t)
	for _, size := range []struct {
		name string
		w, h int64
	}{{"desktop", 1280, 900}, {"phone", 390, 844}} {
		p := browsertest.Open(t, browser, "file://"+filepath.ToSlash(index), size.w, size.h)
		rows := browsertest.Eval[[]string](t, p, `[...document.querySelectorAll('table.batches tbody tr')].map(r => r.innerText)`)
		if len(rows) != 2 || !strings.Contains(rows[0], filepath.Base(filepath.Dir(batch))) {
			t.Fatalf("%s: index rows %q", size.name, rows)
		}
		if browsertest.Eval[bool](t, p, `document.documentElement.scrollWidth > innerWidth + 1`) {
			t.Errorf("%s: the index is wider than the window", size.name)
		}
		if out := p.RequestsOutside(root); len(out) > 0 {
			t.Errorf("%s: requests outside the root: %v", size.name, out)
		}

		p = browsertest.Open(t, browser, "file://"+filepath.ToSlash(batch), size.w, size.h)
		if v := browsertest.Eval[string](t, p, `document.querySelector('#verdict .verdict-word').innerText`); !strings.EqualFold(v, "failed") {
			t.Errorf("%s: verdict %q", size.name, v)
		}
		if n := browsertest.Eval[int](t, p, `document.querySelectorAll('.timeline').length`); n != 2 {
			t.Errorf("%s: %d timelines", size.name, n)
		}
		if n := browsertest.Eval[int](t, p, `document.querySelectorAll('.timeline .slot').length`); n != 6 {
			t.Errorf("%s: %d slots, want 6 attempts", size.name, n)
		}
		if flaky == "flaky" {
			row := browsertest.Eval[string](t, p, `[...document.querySelectorAll('#cases tbody tr')].find(r => r.dataset.name === 'login-ok').innerText`)
			if !strings.Contains(row, "⚑ flaky") || strings.Count(row, "#") != 2 {
				t.Errorf("%s: flaky row %q", size.name, row)
			}
		} else {
			t.Errorf("login-ok was %s, want flaky", flaky)
		}
		if n := browsertest.Eval[int](t, p, `document.querySelectorAll('.strip .dot').length`); n < 4 {
			t.Errorf("%s: %d history dots", size.name, n)
		}
		visible := `[...document.querySelectorAll('#cases tbody tr')].filter(r => r.offsetParent !== null).map(r => r.dataset.name).join(',')`
		browsertest.Eval[bool](t, p, `(document.querySelector('label[for=vf-failed]').click(), true)`)
		if got := browsertest.Eval[string](t, p, visible); got != "pay-broken" {
			t.Errorf("%s: the failed filter shows %q", size.name, got)
		}
		browsertest.Eval[bool](t, p, `(document.querySelector('label[for=vf-all]').click(), true)`)
		browsertest.Eval[bool](t, p, `(() => { const q = document.getElementById('case-search'); q.value = 'CART'; q.dispatchEvent(new Event('input')); return true })()`)
		if got := browsertest.Eval[string](t, p, visible); got != "cart-ok" {
			t.Errorf("%s: the search shows %q", size.name, got)
		}
		if browsertest.Eval[bool](t, p, `document.documentElement.scrollWidth > innerWidth + 1`) {
			t.Errorf("%s: the batch report is wider than the window", size.name)
		}
		if broken := browsertest.BrokenImages(t, p); len(broken) > 0 {
			t.Errorf("%s: broken images %v", size.name, broken)
		}
		if out := p.RequestsOutside(root); len(out) > 0 {
			t.Errorf("%s: requests outside the root: %v", size.name, out)
		}
		browsertest.Screenshot(t, p, "suite-report-"+size.name)
	}
}
