package devicecmd

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestConfigCommands(t *testing.T) {
	solo := newDevSoloPi()
	deps := testDeps(newDevTransport(t, solo))
	ctx := context.Background()

	res, err := runConfigList(ctx, deps)
	out, code := printed(t, "config-list", res, err)
	if code != 0 || strings.Contains(string(out), "topsecret") {
		t.Fatalf("exit %d: %s", code, out)
	}
	res, err = runConfigGet(ctx, deps, "KEY_AES_KEY")
	out, code = printed(t, "config-get", res, err)
	if code != 0 || strings.Contains(string(out), "topsecret") || !strings.Contains(string(out), `"redacted":true`) {
		t.Fatalf("exit %d: %s", code, out)
	}
	res, err = runConfigGet(ctx, deps, "KEY_MAX_WAIT_TIME")
	if out, code = printed(t, "config-get", res, err); code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	res, err = runConfigSet(ctx, deps, configSetOptions{key: "KEY_MAX_WAIT_TIME", value: "20000", ackTimeout: time.Second, pollInterval: 10 * time.Millisecond})
	out, code = printed(t, "config-set", res, err)
	if code != 0 || !strings.Contains(string(out), `"confirmed":true`) || !strings.Contains(string(out), `"actualValue":20000`) {
		t.Fatalf("exit %d: %s", code, out)
	}
}
