package chat

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/solopi-dev/solopi/agentloop/chatapi"
	"github.com/solopi-dev/solopi/artifacts"
)

// Token limit fields. Endpoints disagree: most take max_tokens, OpenAI's
// reasoning models refuse it and want max_completion_tokens, a few take
// neither.
const (
	TokenFieldMaxTokens           = "max_tokens"
	TokenFieldMaxCompletionTokens = "max_completion_tokens"
	tokenFieldNone                = "none"
)

// requestParams are the optional request fields endpoints disagree on.
// They start from what most endpoints accept and change only when an
// endpoint refuses a field with a 400 that names it.
type requestParams struct {
	TokenField  string `json:"token_field"`
	Temperature bool   `json:"temperature"`
	// StreamUsage sends stream_options.include_usage with stream:true,
	// so a streamed answer still reports its tokens.
	StreamUsage bool `json:"stream_usage"`
}

// DefaultRequestParams is what most endpoints accept.
func DefaultRequestParams() requestParams {
	return requestParams{TokenField: TokenFieldMaxTokens, Temperature: true, StreamUsage: true}
}

// refusal is one field an endpoint refused and what to send instead.
type refusal struct {
	field string
	next  requestParams
}

// without returns the parameters with the field the error names dropped
// (max_tokens becomes max_completion_tokens first), or false when the
// error names none of the optional fields this request sent.
func (p requestParams) without(e chatapi.APIError, stream bool) (refusal, bool) {
	n := p
	switch {
	case p.TokenField == TokenFieldMaxTokens && e.Names(TokenFieldMaxTokens):
		n.TokenField = TokenFieldMaxCompletionTokens
		return refusal{TokenFieldMaxTokens, n}, true
	case p.TokenField == TokenFieldMaxCompletionTokens && e.Names(TokenFieldMaxCompletionTokens):
		n.TokenField = tokenFieldNone
		return refusal{TokenFieldMaxCompletionTokens, n}, true
	case p.Temperature && e.Names("temperature"):
		n.Temperature = false
		return refusal{"temperature", n}, true
	case stream && p.StreamUsage && (e.Names("stream_options") || e.Names("include_usage")):
		n.StreamUsage = false
		return refusal{"stream_options", n}, true
	}
	return refusal{}, false
}

// Endpoint profile sources.
const (
	ParamsDefault = "default"
	ParamsCache   = "cache"
	paramsLearned = "learned"
)

// EndpointProfile is what one endpoint and model accept, cached beside
// the coordinate profiles so that a refused field costs one extra request
// once, not once per run. It holds no secret.
type EndpointProfile struct {
	Endpoint  string        `json:"endpoint"`
	Model     string        `json:"model"`
	APIStyle  string        `json:"api_style"`
	Thinking  string        `json:"thinking"`
	Params    requestParams `json:"request_params"`
	Source    string        `json:"source"`
	UpdatedAt time.Time     `json:"updated_at,omitzero"`
}

// endpointProfileVersion versions the cached file's format.
const endpointProfileVersion = "endpoint-1"

// endpointCacheFile is the cache file of an endpoint, model, API style and
// thinking mode.
func endpointCacheFile(dir string, c Config) string {
	h := sha256.Sum256([]byte(c.Endpoint() + "\x00" + c.Model + "\x00" + c.APIStyle + "\x00" + c.Thinking + "\x00" + endpointProfileVersion))
	return filepath.Join(dir, "endpoint-"+hex.EncodeToString(h[:12])+".json")
}

// loadEndpointProfile reads a cached profile; a missing file is
// fs.ErrNotExist, a file of another endpoint or a corrupt one an error.
func loadEndpointProfile(path string, c Config) (*EndpointProfile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p EndpointProfile
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("cached endpoint profile %s: %w", path, err)
	}
	if p.Endpoint != c.Endpoint() || p.Model != c.Model || p.APIStyle != c.APIStyle {
		return nil, fmt.Errorf("cached endpoint profile %s does not match this endpoint", path)
	}
	switch p.Params.TokenField {
	case TokenFieldMaxTokens, TokenFieldMaxCompletionTokens, tokenFieldNone:
	default:
		return nil, fmt.Errorf("cached endpoint profile %s has an unknown token field", path)
	}
	return &p, nil
}

// UseCache makes the client read the endpoint profile cached in dir and
// write what it learns back there. A corrupt or foreign file is ignored
// (and replaced on the next refusal).
func (m *Client) UseCache(dir string) {
	if dir == "" {
		return
	}
	path := endpointCacheFile(dir, m.cfg)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cacheFile = path
	p, err := loadEndpointProfile(path, m.cfg)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			m.cacheErr = err
		}
		return
	}
	m.params, m.paramsSource = p.Params, ParamsCache
}

// EndpointProfile is what the client currently sends this endpoint.
func (m *Client) EndpointProfile() EndpointProfile {
	m.mu.Lock()
	defer m.mu.Unlock()
	return EndpointProfile{Endpoint: m.cfg.Endpoint(), Model: m.cfg.Model, APIStyle: m.cfg.APIStyle, Thinking: m.cfg.Thinking,
		Params: m.params, Source: m.paramsSource, UpdatedAt: m.paramsAt}
}

// learn keeps what a refusal taught and writes it to the cache.
func (m *Client) learn(p requestParams) {
	m.mu.Lock()
	m.params, m.paramsSource, m.paramsAt = p, paramsLearned, m.clk.Now().UTC()
	path := m.cacheFile
	prof := EndpointProfile{Endpoint: m.cfg.Endpoint(), Model: m.cfg.Model, APIStyle: m.cfg.APIStyle, Thinking: m.cfg.Thinking,
		Params: p, Source: paramsLearned, UpdatedAt: m.paramsAt}
	m.mu.Unlock()
	if path == "" {
		return
	}
	b, err := json.MarshalIndent(prof, "", "  ")
	if err == nil {
		_, err = artifacts.PrivateState.WriteFile(path, append(b, '\n'))
	}
	if err != nil {
		m.mu.Lock()
		m.cacheErr = err
		m.mu.Unlock()
	}
}

// CacheError is the last error reading or writing the endpoint cache
// (nil when none): the cache is an optimisation, so its failures are
// reported, never fatal.
func (m *Client) CacheError() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cacheErr
}
