package agentcmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/redact"
	"github.com/solopi-dev/solopi/solopi/agent"
)

// envOwnerToken lets a caller pass the owner token without putting it in
// the process list. It is read through env.getenv, never through the flag
// parser, so that help output can never show its value.
const envOwnerToken = "SOLOPI_AGENT_OWNER_TOKEN"

// maxTokenFile caps an owner-token file: a token is at most 160 bytes.
const maxTokenFile = 4096

// Where an owner token came from.
const (
	tokenGenerated = "generated"
	tokenFlag      = "flag"
	tokenFile      = "file"
	tokenEnv       = "env"
)

// tokenInput is what the user gave for the owner token.
type tokenInput struct {
	flag string // --owner-token
	file string // --owner-token-file
}

// resolveOwnerToken picks the token from --owner-token, --owner-token-file
// or SOLOPI_AGENT_OWNER_TOKEN (in that order; the two flags exclude each
// other). It returns a zero token and "" when none is given. Errors never
// contain the token or the file's content.
func resolveOwnerToken(in tokenInput, getenv func(string) string) (agent.OwnerToken, string, error) {
	if in.flag != "" && in.file != "" {
		return agent.OwnerToken{}, "", fault.Usage(fault.CodeConflictingOptions, "give the owner token with --owner-token or --owner-token-file, not both")
	}
	var raw, src string
	switch {
	case in.flag != "":
		raw, src = in.flag, tokenFlag
	case in.file != "":
		b, err := readTokenFile(in.file)
		if err != nil {
			return agent.OwnerToken{}, "", err
		}
		raw, src = b, tokenFile
	default:
		if getenv != nil {
			raw = getenv(envOwnerToken)
		}
		if raw == "" {
			return agent.OwnerToken{}, "", nil
		}
		src = tokenEnv
	}
	tok, err := agent.ParseOwnerToken(raw)
	if err != nil {
		var e *fault.Error
		if errors.As(err, &e) {
			e.With("ownerTokenSource", src)
		}
		return agent.OwnerToken{}, "", err
	}
	return tok, src, nil
}

// readTokenFile reads a token file: a regular file of at most 4 KiB whose
// content, without surrounding white space, is the token.
func readTokenFile(path string) (string, error) {
	b, err := artifacts.Input{What: "owner token file", Code: "invalid_owner_token_file", Field: "ownerTokenFile", Max: maxTokenFile}.Read(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// writeTokenFile creates path with mode 0600 and the token plus a newline,
// under the output policy in exclusive mode: an existing file is never
// replaced, since another session's token could be lost.
func writeTokenFile(path string, tok agent.OwnerToken) (string, error) {
	fr, err := artifacts.Output{Mode: artifacts.Exclusive, Perm: 0o600}.WriteFile(path, []byte(tok.Reveal()+"\n"))
	if err == nil {
		return fr.Path, nil
	}
	if e := fault.From(err); e.Code != fault.CodeOutputExists {
		return "", e.With("ownerTokenFile", path)
	}
	return "", fault.Usage(fault.CodeOutputExists, "--owner-token-out names a file that already exists").With("ownerTokenFile", path)
}

// encodeJSON renders v like the output encoder (no HTML escaping).
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// scrubOutput is the last line of defence for the owner token: whatever a
// command is about to print (result or error object) is searched for the
// token and every occurrence is replaced, whether it came from a device
// answer, a transport error or a bug. The primary rule is that the token is
// never put into an output in the first place.
func scrubOutput(tok agent.OwnerToken, res cmdutil.Result, err error) (cmdutil.Result, error) {
	if tok.IsZero() {
		return res, err
	}
	secret := []byte(tok.Reveal())
	if err != nil {
		e := fault.From(err)
		b, encErr := encodeJSON(e.Fields())
		if encErr == nil && !bytes.Contains(b, secret) && (e.Err == nil || !strings.Contains(e.Err.Error(), tok.Reveal())) {
			return res, e
		}
		clean := &fault.Error{Kind: e.Kind, Code: e.Code, Message: tok.Redact(e.Message), UserAction: tok.Redact(e.UserAction)}
		if len(e.Details) > 0 {
			db, derr := encodeJSON(e.Details)
			var m map[string]any
			if derr == nil && canonjson.Unmarshal(bytes.ReplaceAll(db, secret, []byte(redact.Marker)), &m) == nil {
				clean.Details = m
			}
		}
		return res, clean
	}
	if res.Value == nil {
		return res, nil
	}
	b, encErr := encodeJSON(res.Value)
	if encErr != nil || !bytes.Contains(b, secret) {
		return res, nil
	}
	res.Value = json.RawMessage(bytes.ReplaceAll(b, secret, []byte(redact.Marker)))
	return res, nil
}

// addOwnerToken appends "ownerToken" to an already scrubbed result object:
// the one place the token is ever printed (agent-session-start).
func addOwnerToken(res cmdutil.Result, tok agent.OwnerToken) (cmdutil.Result, error) {
	b, err := encodeJSON(res.Value)
	if err != nil {
		return res, fault.Wrap(fault.Transport, fault.CodeOutputEncodingFailed, "the command result could not be encoded as JSON", err)
	}
	q, _ := json.Marshal(tok.Reveal())
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return res, fault.New(fault.Transport, fault.CodeOutputEncodingFailed, "the command result is not a JSON object")
	}
	out := append([]byte(nil), b[:len(b)-1]...)
	if len(bytes.TrimSpace(out)) > 1 {
		out = append(out, ',')
	}
	out = append(out, `"ownerToken":`...)
	out = append(out, q...)
	out = append(out, '}')
	res.Value = json.RawMessage(out)
	return res, nil
}
