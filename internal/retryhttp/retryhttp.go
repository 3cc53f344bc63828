// Package retryhttp sends a request through go-retryablehttp with its
// pauses taken by a clock.Retry. retryablehttp decides what is retried
// (connection errors, 429 and 5xx; never a bad URL, a TLS certificate or a
// redirect loop) and reads the server's Retry-After; the wait itself runs
// on the retry's clock and ends with the request's context, so a test on a
// clock.Fake never sleeps and an interrupt never waits out a pause.
//
// Only the clients of remote services use it: the model endpoint and the
// cloud decision provider. The device channel retries a dropped adb stream
// with clock.Retry alone.
package retryhttp

import (
	"net/http"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/solopi-dev/solopi/clock"
)

// NewHTTPClient is a pooled client of its own (no state shared with
// http.DefaultClient) whose every attempt is bounded by timeout.
func NewHTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: http.DefaultTransport.(*http.Transport).Clone()}
}

// Do sends req with hc, at most r.Attempts times. The last answer is
// returned as it came (a 5xx after the retries is a response, not an
// error); r.Retryable is not used: retryablehttp's policy classifies.
func Do(hc *http.Client, r clock.Retry, req *retryablehttp.Request) (*http.Response, error) {
	ctx := req.Context()
	rc := &retryablehttp.Client{
		HTTPClient:   hc,
		RetryMax:     max(r.Attempts-1, 0),
		CheckRetry:   retryablehttp.DefaultRetryPolicy,
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
		// retryablehttp waits on a wall-clock timer for what Backoff
		// returns: the pause is taken here instead, on r's clock, and the
		// timer gets nothing to wait for. With min = max = 0 DefaultBackoff
		// yields only a Retry-After of a 429 or 503.
		Backoff: func(_, _ time.Duration, n int, resp *http.Response) time.Duration {
			_ = r.Wait(ctx, n+1, retryablehttp.DefaultBackoff(0, 0, 0, resp))
			return 0
		},
	}
	return rc.Do(req)
}
