package retryhttp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/solopi-dev/solopi/clock"
)

// flaky answers 429 with Retry-After: 7 first, then 200.
func flaky(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func TestDoWaitsRetryAfterOnTheClock(t *testing.T) {
	t.Parallel()
	srv, calls := flaky(t)
	clk := clock.NewFake(time.Unix(0, 0))
	r := clock.Retry{Attempts: 2, Clock: clk, Backoff: clock.Backoff{Base: time.Second}}
	req, _ := retryablehttp.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL, nil)
	done := make(chan int, 1)
	go func() {
		resp, err := Do(NewHTTPClient(time.Minute), r, req)
		if err != nil {
			t.Error(err)
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	if err := clk.WaitForSleepers(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	clk.Advance(6 * time.Second)
	select {
	case <-done:
		t.Fatal("retried before the server's Retry-After (7 s) was over")
	default:
	}
	clk.Advance(time.Second)
	if status := <-done; status != http.StatusOK || calls.Load() != 2 {
		t.Fatalf("status %d after %d calls", status, calls.Load())
	}
}

func TestDoLastAnswerAndInterrupt(t *testing.T) {
	t.Parallel()
	srv, calls := flaky(t)
	// No retry left: the 429 itself is the answer.
	req, _ := retryablehttp.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL, nil)
	resp, err := Do(NewHTTPClient(time.Minute), clock.Retry{Attempts: 1}, req)
	if err != nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("want the 429 back, got %v %v", resp, err)
	}
	resp.Body.Close()

	// An interrupt during the pause ends the call without another request.
	calls.Store(0)
	clk := clock.NewFake(time.Unix(0, 0))
	ctx, cancel := context.WithCancel(context.Background())
	req, _ = retryablehttp.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	done := make(chan error, 1)
	go func() {
		_, err := Do(NewHTTPClient(time.Minute), clock.Retry{Attempts: 3, Clock: clk}, req)
		done <- err
	}()
	if err := clk.WaitForSleepers(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
}
