package managed

import (
	"regexp"
	"strings"
	"sync"
)

// sensitiveKeys are object keys dropped wherever they appear (compared
// lowercased with underscores removed).
var sensitiveKeys = map[string]bool{
	"ownertoken": true, "ownertokenhash": true, "authorization": true, "cookie": true,
	"password": true, "apikey": true, "apisecret": true, "clientsecret": true,
}

// The patterns compile on first use, not at every process start.
var (
	agentTokenPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`verification-[0-9a-f]{32}`) })
	bearerPattern     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)bearer\s+[A-Za-z0-9._~+/-]+=*`) })
)

// Redacted is what a removed secret is replaced with.
const Redacted = "[redacted]"

// Redact returns a copy of the JSON tree v without secrets: sensitive keys
// are dropped, agent owner tokens and bearer credentials inside strings are
// replaced, and so is every known secret. It runs before anything is
// persisted (events, reports) and on every HTTP response.
func Redact(v any, secrets ...string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, item := range x {
			if sensitiveKeys[strings.ToLower(strings.ReplaceAll(k, "_", ""))] {
				continue
			}
			out[k] = Redact(item, secrets...)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			out[i] = Redact(item, secrets...)
		}
		return out
	case string:
		return RedactString(x, secrets...)
	}
	return v
}

// RedactString applies Redact's string rules to s.
func RedactString(s string, secrets ...string) string {
	s = agentTokenPattern().ReplaceAllString(s, Redacted)
	s = bearerPattern().ReplaceAllString(s, "Bearer "+Redacted)
	for _, secret := range secrets {
		if secret != "" {
			s = strings.ReplaceAll(s, secret, Redacted)
		}
	}
	return s
}
