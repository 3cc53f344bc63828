package devicecmd

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/outcome"
)

func fastAdbOptions() adbConnectOptions {
	return adbConnectOptions{connectTimeout: 2 * time.Second, readyTimeout: time.Second, pollInterval: 10 * time.Millisecond}
}

func TestAdbConnectCommand(t *testing.T) {
	solo := newDevSoloPi()
	solo.health = devHealth(false)
	solo.connect = func(s *devSoloPi, id string) {
		s.receipts[id] = map[string]any{"success": true, "requestId": id, "state": "connected", "connected": true,
			"terminal": true, "userActionRequired": false, "startedAt": 1, "finishedAt": 2}
		s.health = devHealth(true)
	}
	res, err := runAdbConnect(context.Background(), testDeps(newDevTransport(t, solo)), fastAdbOptions())
	out, code := printed(t, "adb-connect", res, err)
	if code != outcome.ExitOK || !strings.Contains(string(out), `"alreadyConnected":false`) {
		t.Fatalf("exit %d: %s", code, out)
	}

	// Already connected: same schema, no mutation.
	solo.connect = func(*devSoloPi, string) { t.Error("mutated a ready device") }
	res, err = runAdbConnect(context.Background(), testDeps(newDevTransport(t, solo)), fastAdbOptions())
	out, code = printed(t, "adb-connect", res, err)
	if code != outcome.ExitOK || !strings.Contains(string(out), `"alreadyConnected":true`) {
		t.Fatalf("exit %d: %s", code, out)
	}
}

func TestAdbConnectCommandFailedAndRefused(t *testing.T) {
	solo := newDevSoloPi()
	solo.health = devHealth(false)
	solo.connect = func(s *devSoloPi, id string) {
		s.receipts[id] = map[string]any{"success": false, "requestId": id, "state": "failed", "connected": false,
			"terminal": true, "userActionRequired": true, "requiredUserAction": "请确认 SoloPi 配置的内部 ADB 地址可连接，并在设备上确认 RSA 授权弹窗",
			"errorCode": "adb_connection_failed", "error": "SoloPi internal ADB connection failed", "startedAt": 1, "finishedAt": 2}
	}
	res, err := runAdbConnect(context.Background(), testDeps(newDevTransport(t, solo)), fastAdbOptions())
	out, code := printed(t, "adb-connect", res, err)
	if code != outcome.ExitFailure || !strings.Contains(string(out), `"errorCode":"adb_connection_failed"`) || !strings.Contains(string(out), "RSA") {
		t.Fatalf("exit %d: %s", code, out)
	}

	solo.health["permissions"].(map[string]any)["accessibility"] = false
	solo.connect = func(*devSoloPi, string) { t.Error("mutated although adb is not the only missing item") }
	res, err = runAdbConnect(context.Background(), testDeps(newDevTransport(t, solo)), fastAdbOptions())
	out, code = printed(t, "adb-connect", res, err)
	if code != outcome.ExitFailure || !strings.Contains(string(out), `"errorCode":"adb_connect_precondition_failed"`) {
		t.Fatalf("exit %d: %s", code, out)
	}
}
