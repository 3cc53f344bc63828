// Package browsertest runs pages in Debian's headless Chromium for tests
// (driven with chromedp): it records every request a page makes, checks
// its images and keeps a PNG screenshot of it as a test artifact.
//
// Chromium is /usr/bin/chromium or $CHROMIUM. Without it a test skips,
// except under CI=true where a missing browser is a failure.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/solopi-dev/solopi/internal/tooltest"
)

// path finds the Chromium binary.
func path() (string, bool) {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p, true
	}
	for _, name := range []string{"/usr/bin/chromium", "chromium"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, true
		}
	}
	return "", false
}

// Start launches a fresh headless Chromium for the test, with exactly the
// flags below and its own profile directory, and returns its context.
// The browser stops when the test ends.
func Start(t testing.TB) context.Context {
	t.Helper()
	bin, ok := path()
	if !ok {
		tooltest.Missing(t, "chromium is not installed (set CHROMIUM or apt-get install chromium)")
	}
	profile, err := os.MkdirTemp("", "solopi-chromium-*")
	if err != nil {
		t.Fatal(err)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile),
	)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
		// Chromium's helpers may still write to the profile for a moment
		// after the browser exits.
		for range 50 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	// Start the browser now, on a context without a deadline (a timeout on
	// the first Run would stop the whole browser).
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// page is one tab with the requests it made.
type page struct {
	Ctx    context.Context
	mu     sync.Mutex
	urls   []string
	failed []string
}

// Open loads url in a new tab of the browser at the given viewport size
// and waits for the load event.
func Open(t testing.TB, browser context.Context, url string, width, height int64) *page {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	p := &page{Ctx: ctx}
	if err := chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			p.mu.Lock()
			p.urls = append(p.urls, e.Request.URL)
			p.mu.Unlock()
		case *network.EventLoadingFailed:
			p.mu.Lock()
			p.failed = append(p.failed, e.ErrorText+" "+string(e.RequestID))
			p.mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	tctx, tcancel := context.WithTimeout(ctx, 30*time.Second)
	defer tcancel()
	if err := chromedp.Do(tctx, chromedp.EmulateViewport(width, height), chromedp.Navigate(url)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	return p
}

// Requests lists every URL the page requested so far.
func (p *page) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.urls...)
}

// RequestsOutside lists the requests that are not file:// URLs under dir
// (a report may load its own evidence and nothing else).
func (p *page) RequestsOutside(dir string) []string {
	prefix := "file://" + filepath.ToSlash(dir) + "/"
	var out []string
	for _, u := range p.Requests() {
		if !strings.HasPrefix(u, prefix) {
			out = append(out, u)
		}
	}
	return out
}

// Eval evaluates a JavaScript expression in the page.
func Eval[T any](t testing.TB, p *page, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.Ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %q: %v", expr, err)
	}
	return v
}

// BrokenImages lists the images of the page that did not load (every
// <img> must have a natural width once the page has loaded).
func BrokenImages(t testing.TB, p *page) []string {
	return Eval[[]string](t, p, `Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.getAttribute('src'))`)
}

// Screenshot saves a full-page PNG of the page as name.png in the test's
// artifact directory (and in $SOLOPI_TEST_ARTIFACTS when set) and returns
// its path.
func Screenshot(t testing.TB, p *page, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.Ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(t.TempDir(), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("SOLOPI_TEST_ARTIFACTS"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		keep := filepath.Join(dir, name+".png")
		if err := os.WriteFile(keep, png, 0o644); err != nil {
			t.Fatal(err)
		}
		path = keep
	}
	t.Logf("screenshot %s", path)
	return path
}
