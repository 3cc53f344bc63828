package agentfake

import (
	"context"
	"io"
	"io/fs"
	"net"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/devicefake"
)

// Serial names the fake device.
func (d *Device) Serial() string { return d.tr.Serial() }

// Shell runs cmd on the phone after the fake's own commands.
func (d *Device) Shell(ctx context.Context, cmd string) ([]byte, []byte, int, error) {
	return d.tr.Shell(ctx, cmd)
}

// shell answers what the fake SoloPi and its focus handling own: SoloPi's
// install check, the focused window, and `am start -W -n`.
func (d *Device) shell(ctx context.Context, cmd string, args []string) (devicefake.Reply, bool) {
	reply := func(out, errOut []byte, code int, err error) (devicefake.Reply, bool) {
		return devicefake.Reply{Stdout: string(out), Stderr: string(errOut), Code: code, Err: err}, true
	}
	switch {
	case len(args) == 3 && args[0] == "pm" && args[1] == "path" && args[2] == SoloPiPackage:
		return reply([]byte("package:/data/app/"+SoloPiPackage+"-1/base.apk\n"), nil, 0, nil)
	case len(args) == 2 && args[0] == "dumpsys" && args[1] == "window":
		d.mu.Lock()
		f := d.focus
		d.mu.Unlock()
		return reply([]byte("WINDOW MANAGER WINDOWS (dumpsys window windows)\n  mCurrentFocus=Window{1a2b3c u0 "+f+"}\n  mFocusedApp=null\n"), nil, 0, nil)
	case len(args) >= 5 && args[0] == "am" && args[1] == "start" && args[2] == "-W" && args[3] == "-n":
		comp := args[4]
		if comp == SoloPiPackage+"/"+protocol.AdbSchemeActivity {
			return reply(d.amScheme(args[5:]))
		}
		if len(args) != 5 {
			return reply(nil, []byte("Error: unexpected arguments\n"), 1, nil)
		}
		d.mu.Lock()
		d.focus = comp
		d.mu.Unlock()
		return reply([]byte("Starting: Intent { cmp="+comp+" }\nStatus: ok\n"), nil, 0, nil)
	}
	return devicefake.Reply{}, false
}

// amScheme handles `-a VIEW -d <uri>` for the protected activity.
func (d *Device) amScheme(rest []string) ([]byte, []byte, int, error) {
	if len(rest) != 4 || rest[0] != "-a" || rest[1] != protocol.ViewAction || rest[2] != "-d" {
		return nil, []byte("Error: bad intent arguments\n"), 1, nil
	}
	uri := rest[3]
	d.mu.Lock()
	d.focus = protectedFocus
	d.mu.Unlock()
	action, q, ok := parseSchemeURI(uri)
	if ok && action == protocol.ActionAgent {
		d.mutate(q)
	}
	return []byte("Starting: Intent { act=android.intent.action.VIEW dat=solopi://startaction/... cmp=" + protectedFocus + " }\nStatus: ok\n"), nil, 0, nil
}

// parseSchemeURI decodes solopi://startaction/<action>?<query> the way the
// protected activity does (protocol.ParseMutationURI: first value wins).
func parseSchemeURI(uri string) (string, map[string]string, bool) {
	if !strings.HasPrefix(uri, protocol.SchemeURIPrefix) {
		return "", nil, false
	}
	u := protocol.ParseMutationURI(uri)
	action, ok := u.Action()
	return action, u.Params, ok
}

// Exec runs cmd on the phone (exec:, binary-safe).
func (d *Device) Exec(ctx context.Context, cmd string) ([]byte, error) { return d.tr.Exec(ctx, cmd) }

// DialTCP opens a stream to the control port.
func (d *Device) DialTCP(ctx context.Context, port int) (net.Conn, error) {
	return d.tr.DialTCP(ctx, port)
}

// Push writes a file on the phone.
func (d *Device) Push(ctx context.Context, r io.Reader, remotePath string, mode fs.FileMode, mtime time.Time) error {
	return d.tr.Push(ctx, r, remotePath, mode, mtime)
}

// Pull copies a phone file.
func (d *Device) Pull(ctx context.Context, remotePath string, w io.Writer) error {
	return d.tr.Pull(ctx, remotePath, w)
}

// Stat describes a phone path.
func (d *Device) Stat(ctx context.Context, remotePath string) (fs.FileInfo, error) {
	return d.tr.Stat(ctx, remotePath)
}

// Focus is the focused component.
func (d *Device) Focus() string { d.mu.Lock(); defer d.mu.Unlock(); return d.focus }

// SetFocus moves the focus (another app coming to the front).
func (d *Device) SetFocus(comp string) { d.mu.Lock(); defer d.mu.Unlock(); d.focus = comp }

// Screen is the name of the screen the app shows.
func (d *Device) Screen() string { d.mu.Lock(); defer d.mu.Unlock(); return d.screen }

// Mutations lists every decoded agent mutation.
func (d *Device) Mutations() []Mutation {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Mutation(nil), d.mutations...)
}

// ShellCommands lists every shell command received.
func (d *Device) ShellCommands() []string {
	var out []string
	for _, c := range d.tr.ShellLog() {
		if !strings.HasPrefix(c, "exec:") {
			out = append(out, c)
		}
	}
	return out
}

// File returns a device file.
func (d *Device) File(path string) ([]byte, bool) { return d.tr.Files.Get(path) }

// Files lists the device file paths.
func (d *Device) Files() []string { return d.tr.Files.Paths() }

// SessionState returns the current session's id and state.
func (d *Device) SessionState() (id, state, reason string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sess == nil {
		return "", "idle", ""
	}
	return d.sess.id, d.sess.state, d.sess.terminalReason
}

// EventTypes lists the current session's event types in order.
func (d *Device) EventTypes() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sess == nil {
		return nil
	}
	var out []string
	for _, e := range d.sess.events {
		out = append(out, e.Type)
	}
	return out
}
