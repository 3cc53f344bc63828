package android

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

func TestLogcatBounded(t *testing.T) {
	t.Parallel()
	p := New(Config{LogcatLines: 50}, nil)
	for i := 0; i < 500; i++ {
		p.Log('I', "Spam", fmt.Sprintf("line %d", i))
	}
	entries := p.Logcat()
	if len(entries) != 50 {
		t.Fatalf("buffer holds %d entries, want 50", len(entries))
	}
	if entries[0].Msg != "line 450" || entries[49].Msg != "line 499" {
		t.Errorf("kept %q..%q, want the newest", entries[0].Msg, entries[49].Msg)
	}
	for i := 1; i < len(entries); i++ {
		if entries[i].Seq != entries[i-1].Seq+1 {
			t.Fatal("sequence gap")
		}
	}
	out := mustSh(t, p, "logcat -d")
	if n := strings.Count(out, "\n"); n != 51 {
		t.Errorf("logcat -d printed %d lines", n)
	}
}

func TestLogFormats(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	p.ClearLogcat()
	launch(t, p, "com.example.counter")
	p.LogApp("com.example.counter", 'W', "Counter", "careful")
	e := p.Logcat()[len(p.Logcat())-1]
	pid, _ := p.ProcessRunning("com.example.counter")
	if e.PID != pid || e.Level != 'W' {
		t.Errorf("entry %+v, app pid %d", e, pid)
	}
	cases := map[string]string{
		"threadtime": `^\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} +\d+ +\d+ W Counter : careful\n$`,
		"brief":      `^W/Counter \( *\d+\): careful\n$`,
		"time":       `^\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} W/Counter \( *\d+\): careful\n$`,
		"tag":        `^W/Counter : careful\n$`,
		"raw":        `^careful\n$`,
	}
	for f, re := range cases {
		if got := formatLog(e, f); !regexp.MustCompile(re).MatchString(got) {
			t.Errorf("%s: %q", f, got)
		}
	}
}
