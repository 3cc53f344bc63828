package browsertest

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The live console's page (report/console) as the command tests drive it:
// its stop button, and the final state it keeps once the run has ended.

// ConsoleStop waits for the console's stop button and clicks it.
func ConsoleStop(ctx context.Context, t testing.TB) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#stop"))); err != nil {
		t.Fatalf("no stop button: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#stop"))); err != nil {
		t.Fatal(err)
	}
}

// ConsoleFinal checks the end the console at consoleURL shows: the final
// outcome holding outcome, the report's path, and the link that serves
// the report under the console's token.
func ConsoleFinal(ctx context.Context, t testing.TB, p *page, consoleURL, outcome, report string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#final"))); err != nil {
		t.Fatalf("the page does not show the end of the run: %v", err)
	}
	if got := Eval[string](t, p, `document.getElementById("final-outcome").textContent`); !strings.Contains(got, outcome) {
		t.Errorf("final outcome %q, want %q in it", got, outcome)
	}
	if got := Eval[string](t, p, `document.querySelector("#final-report code").textContent`); got != report {
		t.Errorf("report path shown %q, want %s", got, report)
	}
	cu, _ := url.Parse(consoleURL)
	if href, want := Eval[string](t, p, `document.getElementById("report-link").href`), "http://"+cu.Host+"/evidence/"+cu.Query().Get("token")+"/report.html"; href != want {
		t.Errorf("report link %q, want %q", href, want)
	}
}
