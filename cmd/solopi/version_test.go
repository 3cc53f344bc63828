package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/schemas/schematest"
)

func TestVersionMatchesSchema(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"version"}, {"--pretty", "version"}} {
		r := runBinary(t, nil, args...)
		if r.code != 0 {
			t.Fatalf("%v exit %d stderr %s", args, r.code, r.stderr)
		}
		schematest.Validate(t, "version", r.stdout)
		var v versionResult
		if err := json.Unmarshal(r.stdout, &v); err != nil {
			t.Fatal(err)
		}
		if v.Protocols["harness"] != "2.0" || v.Protocols["agent"] != "1.0" {
			t.Errorf("protocols = %v", v.Protocols)
		}
	}
}

func TestActionsListsTypedActionsFromProtocol(t *testing.T) {
	t.Parallel()
	r := runBinary(t, nil, "actions")
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	schematest.Validate(t, "actions", r.stdout)
	if !strings.Contains(string(r.stdout), `"name":"scroll"`) || !strings.Contains(string(r.stdout), `"enum":["up","down","left","right"]`) {
		t.Errorf("scroll rules missing: %s", r.stdout)
	}
	if !strings.Contains(string(r.stdout), `"paramValues":{"assertMode":["assert_accurate","assert_contain","assert_regular",`) {
		t.Errorf("ASSERT's assertMode values missing: %s", r.stdout)
	}
}

// Usage errors are the parser's text on stderr, nothing on stdout, exit 3.
func TestUsageErrorsExit3WithNothingOnStdout(t *testing.T) {
	t.Parallel()
	cases := [][]string{
		{"no-such-command"},
		{"--no-such-flag", "version"},
		{"version", "--no-such-flag"},
		{"run"}, // a required flag is missing
		{"record-start", "--name", "x"},
		{},
	}
	for _, args := range cases {
		r := runBinary(t, nil, args...)
		if r.code != 3 {
			t.Errorf("%v: exit %d, want 3", args, r.code)
		}
		if len(r.stdout) != 0 {
			t.Errorf("%v: stdout not empty: %q", args, r.stdout)
		}
		if len(r.stderr) == 0 {
			t.Errorf("%v: stderr empty", args)
		}
	}
}

// A global seconds value the parser refuses (as solopi-ai's argparse type
// check) is its text on stderr, before or after the command; a port from
// the environment out of range is the command's JSON usage error. Both
// exit 3.
func TestBadGlobalValues(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--request-timeout", "-1", "version"}, {"version", "--startup-timeout", "0"}} {
		r := runBinary(t, nil, args...)
		if r.code != 3 || len(r.stdout) != 0 || !strings.Contains(string(r.stderr), "must be a positive number of seconds") {
			t.Errorf("%v: exit %d\nstdout %q\nstderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
	r := runBinary(t, []string{"ANDROID_ADB_SERVER_PORT=99999"}, "version")
	if r.code != 3 {
		t.Errorf("bad ANDROID_ADB_SERVER_PORT: exit %d", r.code)
	}
	schematest.Validate(t, "version", r.stdout)
	if !strings.Contains(string(r.stdout), `"errorCode":"invalid_option"`) {
		t.Errorf("stdout %s", r.stdout)
	}
}

func TestHelpGoesToStdoutWhenAsked(t *testing.T) {
	t.Parallel()
	r := runBinary(t, nil, "--help")
	if r.code != 0 || !strings.Contains(string(r.stdout), "solopi") {
		t.Errorf("help exit %d stdout %q", r.code, r.stdout)
	}
}
