package execution

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/internal/retryhttp"
)

// Decision provider names (verify-run --decision-provider).
const (
	ProviderStatic   = "static"
	providerCloud    = "cloud"
	providerOnDevice = "on-device"
	ProviderVision   = "vision"
)

// ProviderOptions are the verify-run flags that choose and configure the
// decision provider.
type ProviderOptions struct {
	Name string
	// DecisionsFile is set when --agent-decisions was given: only the
	// static provider reads it.
	DecisionsFile         string
	CloudEndpoint         string
	CloudFallbackEndpoint string
	// OnDeviceFlags names the on-device provider's flags that were given
	// (--model-package, --model-id, --model-version, --public-key): they
	// mean nothing to any other provider.
	OnDeviceFlags []string
	CloudTimeout  time.Duration // default 30 s
	// Vision is the pure-vision planner provider, built once the planner
	// preflight passed (Prepare's Setup).
	Vision DecisionProvider
	// Clock takes the cloud retries' pauses (nil: the real clock).
	Clock clock.Clock
}

// checkProvider refuses provider options that cannot work, without
// building anything: an unknown name, a live provider with a decisions
// file, cloud without an endpoint, an on-device flag given to another
// provider, and on-device itself, which needs SoloPi's on-device model
// packages that this tool does not deploy.
func checkProvider(opts ProviderOptions) error {
	name := opts.Name
	if name == "" {
		name = ProviderStatic
	}
	switch name {
	case ProviderStatic, providerCloud, ProviderVision:
	case providerOnDevice:
		return fault.Usage(fault.CodeProviderNotSupported,
			"the on-device provider runs SoloPi's signed on-device model packages, which this tool does not deploy; use --decision-provider vision, cloud or static").
			WithUserAction("choose --decision-provider static (a decisions file), cloud (--cloud-endpoint) or vision")
	default:
		return fault.Usagef(fault.CodeInvalidProviderOptions, "unknown decision provider %q (static, cloud, vision, on-device)", name)
	}
	if len(opts.OnDeviceFlags) > 0 {
		return fault.Usagef(fault.CodeInvalidProviderOptions, "--%s only configure the on-device provider, not %s", opts.OnDeviceFlags[0], name).
			With("flags", opts.OnDeviceFlags)
	}
	if name == ProviderStatic {
		if opts.CloudEndpoint != "" || opts.CloudFallbackEndpoint != "" {
			return fault.Usage(fault.CodeInvalidProviderOptions, "--cloud-endpoint and --cloud-fallback-endpoint need --decision-provider cloud or vision")
		}
		return nil
	}
	if opts.DecisionsFile != "" {
		return fault.Usagef(fault.CodeProviderConflict, "--decision-provider %s cannot be combined with --agent-decisions", name)
	}
	if name == providerCloud && opts.CloudEndpoint == "" {
		return fault.Usage(fault.CodeInvalidProviderOptions, "--decision-provider cloud needs --cloud-endpoint")
	}
	for _, ep := range []string{opts.CloudEndpoint, opts.CloudFallbackEndpoint} {
		if ep != "" {
			if err := checkEndpoint(ep); err != nil {
				return err
			}
		}
	}
	return nil
}

// selectProvider returns the live provider for opts, or nil for static
// (the engine then reads its Decisions).
func selectProvider(opts ProviderOptions) (DecisionProvider, error) {
	if err := checkProvider(opts); err != nil {
		return nil, err
	}
	var p DecisionProvider
	switch opts.Name {
	case providerCloud:
		p = newCloudProvider(opts.CloudEndpoint, opts.CloudTimeout, opts.Clock)
	case ProviderVision:
		if opts.Vision == nil {
			return nil, fault.Usage(fault.CodeProviderNotSupported, "the vision provider needs a model configuration (planner) for this run")
		}
		p = opts.Vision
	default:
		return nil, nil
	}
	if opts.CloudFallbackEndpoint != "" {
		p = &fallbackProvider{Primary: p, Fallback: newCloudProvider(opts.CloudFallbackEndpoint, opts.CloudTimeout, opts.Clock)}
	}
	return p, nil
}

// providerError is a provider failure; fallback-eligible ones (the model
// was unreachable, not wrong) let a FallbackProvider answer instead.
func providerError(code, msg string, eligible bool, cause error) *fault.Error {
	return fault.Wrap(fault.Transport, code, msg, cause).With("fallbackEligible", eligible)
}

// fallbackEligible reports whether err lets a fallback provider answer.
func fallbackEligible(err error) bool {
	var e *fault.Error
	if !errors.As(err, &e) {
		return false
	}
	ok, _ := e.Details["fallbackEligible"].(bool)
	return ok
}

// maxCloudResponse caps a cloud provider's answer.
const maxCloudResponse = 1 << 20

// cloudProvider posts the decision context as JSON to an endpoint and reads
// one decision object back (solopi-ai's HTTP contract): 30 s per request,
// at most 1 MiB, a JSON object. An unreachable endpoint, an HTTP error or
// an unreadable answer is cloud_unavailable (fallback-eligible); an answer
// that is not an object is invalid_decision.
type cloudProvider struct {
	endpoint string
	timeout  time.Duration
	http     *http.Client
	retry    clock.Retry
}

// checkEndpoint accepts an http or https URL.
func checkEndpoint(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fault.Usage(fault.CodeInvalidProviderOptions, "the cloud endpoint must be an http or https URL")
	}
	return nil
}

// newCloudProvider builds the client of an endpoint CheckProvider
// accepted.
func newCloudProvider(endpoint string, timeout time.Duration, clk clock.Clock) *cloudProvider {
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	// One retry of a dropped connection, a 429 or a 5xx, 200 ms later (or
	// after the endpoint's Retry-After).
	retry := clock.Retry{Attempts: 2, Clock: clk, Backoff: clock.Backoff{Base: 200 * time.Millisecond, Max: time.Second}}
	return &cloudProvider{endpoint: endpoint, timeout: timeout, http: retryhttp.NewHTTPClient(timeout), retry: retry}
}

// Decide posts in and returns the decision object.
func (c *cloudProvider) Decide(ctx context.Context, in DecisionContext) (map[string]any, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, fault.CodeCloudUnavailable, "cannot encode the decision context", err)
	}
	// One budget for the decision, a retry of a dropped connection or a
	// 5xx included.
	rctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := retryablehttp.NewRequestWithContext(rctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, providerError(fault.CodeCloudUnavailable, "the cloud decision provider is unavailable", true, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := retryhttp.Do(c.http, c.retry, req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fault.Wrap(fault.Interrupted, fault.CodeInterrupted, "interrupted while waiting for the cloud decision provider", ctx.Err())
		}
		return nil, providerError(fault.CodeCloudUnavailable, "the cloud decision provider is unavailable", true, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxCloudResponse+1))
	switch {
	case err != nil:
		return nil, providerError(fault.CodeCloudUnavailable, "the cloud decision provider's answer could not be read", true, err)
	case resp.StatusCode/100 != 2:
		return nil, providerError(fault.CodeCloudUnavailable, fmt.Sprintf("the cloud decision provider answered HTTP %d", resp.StatusCode), true, nil)
	case len(data) > maxCloudResponse:
		return nil, providerError(fault.CodeCloudUnavailable, "the cloud decision provider's answer is larger than 1 MiB", true, nil)
	}
	v, err := canonjson.Decode(data)
	if err != nil {
		return nil, providerError(fault.CodeCloudUnavailable, "the cloud decision provider's answer is not JSON", true, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, providerError(fault.CodeInvalidDecision, "the cloud decision must be a JSON object", false, nil)
	}
	return m, nil
}

// fallbackProvider asks Fallback when Primary fails in a fallback-eligible
// way, and marks the decision {"fallback":{"used":true,"reason","primaryError"}}.
type fallbackProvider struct {
	Primary, Fallback DecisionProvider
}

// Decide asks the primary, then the fallback.
func (f *fallbackProvider) Decide(ctx context.Context, in DecisionContext) (map[string]any, error) {
	d, err := f.Primary.Decide(ctx, in)
	if err == nil || fault.IsInterrupt(err) || !fallbackEligible(err) {
		return d, err
	}
	d, ferr := f.Fallback.Decide(ctx, in)
	if ferr != nil {
		return nil, ferr
	}
	e := fault.From(err)
	out := make(map[string]any, len(d)+1)
	for k, v := range d {
		out[k] = v
	}
	out["fallback"] = map[string]any{"used": true, "reason": e.Code, "primaryError": e.Message}
	return out, nil
}
