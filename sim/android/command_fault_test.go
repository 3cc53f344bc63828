package android

import "testing"

func TestOverrideCommandAnswersInOrderThenRuns(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	run := func(cmd string) (string, string, int) {
		r := sh(t, p, cmd)
		return r.out, r.err, r.rc
	}
	if err := p.OverrideCommand("nosuchtool", nil, CommandOutput{}); err == nil {
		t.Fatal("an unknown command was overridden")
	}
	if err := p.OverrideCommand("pm", []string{"path"}, CommandOutput{Stdout: "package:/vendor/x.apk\n"}, CommandOutput{Stderr: "pm: busy\n", Exit: 2}); err != nil {
		t.Fatal(err)
	}
	// Other arguments run the real command; the override waits.
	if out, _, code := run("pm list packages"); code != 0 || out == "package:/vendor/x.apk\n" {
		t.Fatalf("pm list: %q %d", out, code)
	}
	// In a pipeline too: the override is per run of the command.
	if out, _, code := run("pm path com.example.counter | cat"); code != 0 || out != "package:/vendor/x.apk\n" {
		t.Fatalf("first override: %q %d", out, code)
	}
	if _, errOut, code := run("pm path com.example.counter"); code != 2 || errOut != "pm: busy\n" {
		t.Fatalf("second override: %q %d", errOut, code)
	}
	if out, _, code := run("pm path com.example.counter"); code != 0 || out == "package:/vendor/x.apk\n" || out == "" {
		t.Fatalf("after the overrides: %q %d", out, code)
	}
	// No outputs removes an override before it is used.
	if err := p.OverrideCommand("pm", nil, CommandOutput{Stdout: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := p.OverrideCommand("pm", nil); err != nil {
		t.Fatal(err)
	}
	if out, _, _ := run("pm path com.example.counter"); out == "x" {
		t.Fatal("a removed override answered")
	}
}
