package artifacts

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/solopi-dev/solopi/fault"
)

func TestInputRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := write("ok.json", `{"a":"é"}`)
	big := write("big.json", strings.Repeat("x", 11))
	latin := write("latin.json", "{\"a\":\"caf\xe9\"}")
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(ok, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	in := Input{What: "test file", Max: 10, UTF8: true}
	for _, c := range []struct {
		name, path, code string
		in               Input
	}{
		{"regular", ok, "", in},
		{"through a symlink", link, "", in},
		{"missing", filepath.Join(dir, "nope"), fault.CodeInputUnreadable, in},
		{"too large", big, fault.CodeInputTooLarge, in},
		{"a directory", dir, fault.CodeInputNotRegular, in},
		{"a named pipe", fifo, fault.CodeInputNotRegular, in},
		{"not UTF-8", latin, fault.CodeInputInvalidUTF8, Input{What: "test file", UTF8: true}},
		{"not UTF-8 allowed", latin, "", Input{What: "test file"}},
		{"symlink refused", link, fault.CodeInputNotRegular, Input{What: "test file", NoSymlink: true}},
		{"the contract's code", big, "case_file_unreadable", Input{What: "case file", Code: "case_file_unreadable", Max: 10}},
	} {
		b, err := c.in.Read(c.path)
		if code(err) != c.code {
			t.Errorf("%s: %v, want code %q", c.name, err, c.code)
			continue
		}
		if c.code == "" {
			if len(b) == 0 {
				t.Errorf("%s: read nothing", c.name)
			}
			continue
		}
		e := fault.From(err)
		if e.Kind != fault.Invalid || e.Details["path"] != c.path || !strings.Contains(e.Message, c.in.What) {
			t.Errorf("%s: %+v", c.name, e)
		}
	}
	refusal := func(in Input, path string) *fault.Error {
		_, err := in.Read(path)
		return fault.From(err)
	}
	if e := refusal(Input{What: "test file", UTF8: true}, latin); e.Details["offset"] != 9 || !strings.Contains(e.Message, "0xE9 at offset 9") {
		t.Errorf("invalid UTF-8 is located: %+v", e)
	}
	if e := refusal(Input{What: "token file", Field: "ownerTokenFile"}, big+"x"); e.Details["ownerTokenFile"] != big+"x" {
		t.Errorf("the path detail: %+v", e.Details)
	}
	huge := write("huge", strings.Repeat("x", 5<<10))
	if e := refusal(Input{What: "plan", Max: 4 << 10}, huge); !strings.Contains(e.Message, "larger than 4 KiB") || e.Details["maximumBytes"] != int64(4<<10) {
		t.Errorf("the cap in words: %+v", e)
	}
}
