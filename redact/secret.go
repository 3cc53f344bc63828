// Package redact keeps secrets out of everything solopi prints, writes or
// logs. It has one marker (Marker) that stands where a secret was, one
// Secret type whose every formatting and encoding path prints the marker,
// and one Redactor that hides known secret values, bearer credentials and
// verification owner tokens in text and drops sensitive keys from JSON
// trees.
//
// The secrets are owner tokens (Agent sessions, managed tasks), bearer
// tokens, model API keys, encryption keys and the values of a case's
// encrypted parameters. The package imports only the standard library.
package redact

import (
	"encoding/json"
	"fmt"
	"log/slog"
)

// Marker is what a secret is replaced with, everywhere.
const Marker = "[redacted]"

// Secret holds a credential. Its value is reachable only through Reveal:
// String, GoString, every fmt verb, JSON, text encoding and slog print
// Marker, so a secret cannot slip into a log line, an error, an event or a
// file by accident.
type Secret struct{ v string }

// NewSecret wraps s.
func NewSecret(s string) Secret { return Secret{v: s} }

// Reveal returns the secret's text. Call it only where the credential goes
// on the wire or is handed to its owner.
func (s Secret) Reveal() string { return s.v }

// IsZero reports whether no secret is set.
func (s Secret) IsZero() bool { return s.v == "" }

// Redact hides the secret in text (see Redactor).
func (s Secret) Redact(text string) string { return New(s.v).Text(text) }

// String never shows the secret.
func (s Secret) String() string { return Marker }

// GoString never shows the secret (%#v).
func (s Secret) GoString() string { return Marker }

// Format never shows the secret, whatever the verb.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(Marker)) }

// MarshalJSON never shows the secret.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(Marker) }

// MarshalText never shows the secret.
func (s Secret) MarshalText() ([]byte, error) { return []byte(Marker), nil }

// LogValue never shows the secret to log/slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(Marker) }
