package devicecmd

import (
	"context"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/schemas"
)

func TestDoctorReadyAndNot(t *testing.T) {
	solo := newDevSoloPi()
	res, err := runDoctor(context.Background(), testDeps(newDevTransport(t, solo)))
	out, code := printed(t, "doctor", res, err)
	if code != outcome.ExitOK || !strings.Contains(string(out), `"ready":true`) {
		t.Fatalf("exit %d: %s", code, out)
	}

	solo.health = devHealth(false)
	solo.health["permissions"].(map[string]any)["float"] = false
	res, err = runDoctor(context.Background(), testDeps(newDevTransport(t, solo)))
	out, code = printed(t, "doctor", res, err)
	if code != outcome.ExitFailure {
		t.Fatalf("exit %d: %s", code, out)
	}
	// A not-ready report carries errorCode, so Validate checked it as an
	// error; check the doctor shape too.
	if err := schemas.NewSet().ValidateBytes("doctor", out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"missingPermissions":["adb","float"]`, `"failedChecks":[]`, `"name":"float","ok":false`, "Display over other apps"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("missing %s in %s", want, out)
		}
	}
}

func TestDoctorNotInstalledExit2(t *testing.T) {
	tr := newDevTransport(t, newDevSoloPi())
	tr.shell["pm path"] = func(string) (string, int) { return "", 1 }
	res, err := runDoctor(context.Background(), testDeps(tr))
	out, code := printed(t, "doctor", res, err)
	if code != outcome.ExitFailure || !strings.Contains(string(out), `"installed":false`) || !strings.Contains(string(out), `"errorCode":"solopi_not_installed"`) {
		t.Fatalf("exit %d: %s", code, out)
	}
	if err := schemas.NewSet().ValidateBytes("doctor", out); err != nil {
		t.Fatal(err)
	}
	if tr.ran("monkey") {
		t.Error("launched a package that is not installed")
	}
}
