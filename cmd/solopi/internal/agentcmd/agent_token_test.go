package agentcmd

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/agent"
)

func TestScrubOutputReplacesToken(t *testing.T) {
	tok, _ := agent.ParseOwnerToken("abcdefghijklmnop-1234")
	res, err := scrubOutput(tok, cmdutil.OK(map[string]any{"a": "x abcdefghijklmnop-1234 y"}), nil)
	if err != nil || strings.Contains(string(res.Value.(json.RawMessage)), tok.Reveal()) {
		t.Fatalf("%v %v", res.Value, err)
	}
	_, err = scrubOutput(tok, cmdutil.OK(nil), errors.New("url ?ownerToken=abcdefghijklmnop-1234 failed"))
	b, _ := json.Marshal(fault.From(err).Fields())
	if strings.Contains(string(b), tok.Reveal()) || !strings.Contains(string(b), "[redacted]") {
		t.Fatalf("%s", b)
	}
}
