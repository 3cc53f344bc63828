package devicefake

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/transporttest"
)

func TestSplit(t *testing.T) {
	got, err := Split(`am start -d 'solopi://startaction/x?a=b c' it\'s  x`)
	want := []string{"am", "start", "-d", "solopi://startaction/x?a=b c", "it's", "x"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("Split = %q, %v", got, err)
	}
	if _, err := Split("echo 'open"); err == nil {
		t.Fatal("an unterminated quote splits")
	}
}

func TestTransportFilesAndMutations(t *testing.T) {
	tr := New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.URL.Path) }))
	var uris []string
	tr.Mutate = func(uri string) Reply { uris = append(uris, uri); return AmStarted }
	ctx := context.Background()
	sh := func(cmd string) (string, int) {
		out, _, code, err := tr.Shell(ctx, cmd)
		if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}

	if err := tr.Push(ctx, strings.NewReader("abc"), "/sdcard/d/f.txt", 0o644, time.Now()); err != nil {
		t.Fatal(err)
	}
	if out, code := sh("sha256sum /storage/emulated/0/d/f.txt"); code != 0 || !strings.HasPrefix(out, "ba7816bf") {
		t.Fatalf("sha256sum: %q %d", out, code)
	}
	if out, _ := sh("stat -c %s '/sdcard/d/f.txt'"); out != "3\n" {
		t.Fatalf("stat: %q", out)
	}
	if out, _ := sh("ls -1a /sdcard/d"); !strings.Contains(out, "f.txt\n") {
		t.Fatalf("ls: %q", out)
	}
	if fi, err := tr.Stat(ctx, "/sdcard/d"); err != nil || !fi.IsDir() {
		t.Fatalf("stat dir: %v %v", fi, err)
	}
	if _, code := sh("rm -f -- /sdcard/d/f.txt"); code != 0 {
		t.Fatal("rm failed")
	}
	if _, code := sh("test '!' -e /sdcard/d/f.txt"); code != 0 {
		t.Fatal("the file is still there")
	}
	if err := tr.Pull(ctx, "/sdcard/d/f.txt", io.Discard); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("pull of a removed file: %v", err)
	}

	if out, code := sh("am start -W -n x/y -a android.intent.action.VIEW -d 'solopi://startaction/record?a=1'"); code != 0 || !strings.Contains(out, "Status: ok") {
		t.Fatalf("am start: %q %d", out, code)
	}
	if action, q, err := ParseScheme(uris[0]); err != nil || action != "record" || q.Get("a") != "1" {
		t.Fatalf("mutation %q: %s %v %v", uris, action, q, err)
	}
	if _, code := sh("frobnicate"); code != 127 {
		t.Fatalf("unknown command exit %d", code)
	}
	if tr.Ran("sha256sum ") != 1 || len(tr.ShellLog()) != 7 {
		t.Fatalf("log %q", tr.ShellLog())
	}

	c, err := tr.DialTCP(ctx, protocol.DefaultDevicePort)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /scheme/harness HTTP/1.0\r\n\r\n")
	resp, _ := io.ReadAll(c)
	if !bytes.HasSuffix(resp, []byte("/scheme/harness")) {
		t.Fatalf("response %q", resp)
	}
	if _, err := tr.DialTCP(ctx, 1); err == nil {
		t.Fatal("another port answers")
	}
}

// capabilitiesHandler answers the harness capabilities query the way every
// fake SoloPi does.
func capabilitiesHandler(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"success":true,"protocolVersion":"2.0","agentProtocolVersion":"1.0"}`)
}

// The fake passes the transport conformance suite: everything but its
// scripted SoloPi is the simulated phone.
func TestTransportConformance(t *testing.T) {
	transporttest.Run(t, func(t *testing.T) transporttest.Fixture {
		return transporttest.Fixture{Transport: New(t, http.HandlerFunc(capabilitiesHandler)), HTTPPort: protocol.DefaultDevicePort, Scratch: "/data/local/tmp"}
	})
}

func TestReplayConformance(t *testing.T) {
	transporttest.Run(t, func(t *testing.T) transporttest.Fixture {
		return transporttest.Fixture{Transport: NewReplay(t), HTTPPort: protocol.DefaultDevicePort, Scratch: "/data/local/tmp"}
	})
}
