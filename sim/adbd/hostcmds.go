package adbd

import (
	"context"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"

	"github.com/solopi-dev/solopi/adbwire"
)

// hostCommand serves the requests the adb server answers itself.
func (s *Server) hostCommand(ctx context.Context, c bufConn, sel selector, cmd string) error {
	switch {
	case cmd == "version":
		return adbwire.WriteOkayData(c, serverVersion)
	case cmd == "devices" || cmd == "devices-l":
		return adbwire.WriteOkayData(c, s.deviceList(cmd == "devices-l"))
	case cmd == "track-devices" || cmd == "track-devices-l":
		return s.trackDevices(ctx, c, cmd == "track-devices-l")
	case cmd == "kill":
		err := adbwire.WriteOkay(c)
		go s.Close()
		return err
	case cmd == "host-features":
		return adbwire.WriteOkayData(c, hostFeatures)
	case strings.HasPrefix(cmd, "connect:"):
		return adbwire.WriteOkayData(c, s.connectText(strings.TrimPrefix(cmd, "connect:")))
	case cmd == "disconnect" || strings.HasPrefix(cmd, "disconnect:"):
		return s.disconnect(c, strings.TrimPrefix(strings.TrimPrefix(cmd, "disconnect"), ":"))
	case cmd == "features" || cmd == "get-state" || cmd == "get-serialno" || cmd == "get-devpath":
		d, msg := s.acquire(sel, false)
		if d == nil {
			return adbwire.WriteFail(c, msg)
		}
		switch cmd {
		case "features":
			return adbwire.WriteOkayData(c, features)
		case "get-state":
			return adbwire.WriteOkayData(c, string(StateDevice))
		case "get-serialno":
			return adbwire.WriteOkayData(c, d.dev.Serial())
		}
		return adbwire.WriteOkayData(c, "unknown") // network devices have no devpath
	case strings.HasPrefix(cmd, "wait-for-"):
		return s.waitFor(ctx, c, sel, strings.TrimPrefix(cmd, "wait-for-"))
	case strings.HasPrefix(cmd, "forward:"):
		return s.forward(c, sel, strings.TrimPrefix(cmd, "forward:"))
	case strings.HasPrefix(cmd, "killforward:"):
		return s.killForward(c, strings.TrimPrefix(cmd, "killforward:"))
	case cmd == "killforward-all":
		return s.killForwardAll(c, sel)
	case cmd == "list-forward":
		return adbwire.WriteOkayData(c, s.forwardList())
	}
	return adbwire.WriteFail(c, "unknown host service")
}

// deviceList renders `adb devices` (serial TAB state) or `adb devices -l`
// (serial padded to 22 columns, state, props, transport id), sorted by
// serial like the real server.
func (s *Server) deviceList(long bool) string {
	s.mu.Lock()
	devs := make([]*serverDevice, 0, len(s.devs))
	for _, d := range s.devs {
		devs = append(devs, d)
	}
	s.mu.Unlock()
	sort.Slice(devs, func(i, j int) bool { return devs[i].dev.Serial() < devs[j].dev.Serial() })
	var b strings.Builder
	for _, d := range devs {
		serial := d.dev.Serial()
		if !long {
			fmt.Fprintf(&b, "%s\t%s\n", serial, d.state)
			continue
		}
		fmt.Fprintf(&b, "%-22s %s", serial, d.state)
		// Props come from the device's banner: an unauthorized device never
		// sent one, an offline one keeps what it said when it was online
		// (verified against adb 29's server).
		if d.state != stateUnauthorized {
			product, model, device := d.dev.Props()
			appendInfo(&b, "product:", product, false)
			appendInfo(&b, "model:", model, true)
			appendInfo(&b, "device:", device, false)
		}
		fmt.Fprintf(&b, " transport_id:%d\n", d.id)
	}
	return b.String()
}

// appendInfo mirrors adb's append_transport_info: empty values are left
// out and the model has every non-alphanumeric character replaced by '_'.
func appendInfo(b *strings.Builder, key, value string, alnum bool) {
	if value == "" {
		return
	}
	b.WriteString(" " + key)
	for i := 0; i < len(value); i++ {
		ch := value[i]
		isAlnum := ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z'
		if alnum && !isAlnum {
			ch = '_'
		}
		b.WriteByte(ch)
	}
}

// watchClose cancels the returned context when the client closes its
// connection; used by requests that block server-side.
func watchClose(ctx context.Context, r io.Reader) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		var b [64]byte
		for {
			if _, err := r.Read(b[:]); err != nil {
				cancel()
				return
			}
		}
	}()
	return ctx, cancel
}

// trackDevices sends the device list now and again on every change.
func (s *Server) trackDevices(ctx context.Context, c bufConn, long bool) error {
	ctx, cancel := watchClose(ctx, c)
	defer cancel()
	if err := adbwire.WriteOkay(c); err != nil {
		return err
	}
	last := "\x00" // never a real list, so the first one is always sent
	for {
		s.mu.Lock()
		changed := s.changed
		s.mu.Unlock()
		if list := s.deviceList(long); list != last {
			if _, err := c.Write(adbwire.AppendHex4(nil, list)); err != nil {
				return err
			}
			last = list
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil
		}
	}
}

// waitFor serves wait-for-<transport>-<state>: OKAY at once, a second OKAY
// when the state is reached.
func (s *Server) waitFor(ctx context.Context, c bufConn, sel selector, spec string) error {
	transport, state, ok := strings.Cut(spec, "-")
	if !ok {
		return adbwire.WriteFail(c, "bad wait-for command")
	}
	switch transport {
	case "any":
	case "local":
		if sel.kind == selAny {
			sel.kind = selLocal
		}
	case "usb":
		if sel.kind == selAny {
			sel.kind = selUSB
		}
	default:
		return adbwire.WriteFail(c, "bad wait-for command")
	}
	switch state {
	case "device", "any", "disconnect":
	default:
		// recovery, rescue, sideload, bootloader: a simulated phone never
		// gets there, so the wait would never end.
		return adbwire.WriteFail(c, "wait-for-"+state+" is not supported by the simulator")
	}
	ctx, cancel := watchClose(ctx, c)
	defer cancel()
	if err := adbwire.WriteOkay(c); err != nil {
		return err
	}
	for {
		s.mu.Lock()
		changed := s.changed
		s.mu.Unlock()
		d, msg := s.acquire(sel, true)
		switch {
		case state == "disconnect" && d == nil && !strings.HasPrefix(msg, "more than one"):
			return adbwire.WriteOkay(c)
		case state == "device" && d != nil && d.stateNow(s) == StateDevice,
			state == "any" && d != nil:
			return adbwire.WriteOkay(c)
		case d == nil && strings.HasPrefix(msg, "more than one"):
			return adbwire.WriteFail(c, msg)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil
		}
	}
}

func (d *serverDevice) stateNow(s *Server) State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return d.state
}

// connectText answers host:connect. Simulated devices are registered with
// Add, not dialled, so connecting only recognises them; anything else fails
// the way a refused TCP connect does (still OKAY, the text tells).
func (s *Server) connectText(addr string) string {
	norm := addr
	if _, _, err := net.SplitHostPort(addr); err != nil {
		norm = addr + ":5555"
	}
	s.mu.Lock()
	_, known := s.devs[addr]
	_, knownNorm := s.devs[norm]
	s.mu.Unlock()
	switch {
	case known:
		return "already connected to " + addr
	case knownNorm:
		return "already connected to " + norm
	}
	return fmt.Sprintf("failed to connect to '%s': Connection refused", norm)
}

// disconnect answers host:disconnect: one device (removed) or everything.
func (s *Server) disconnect(c bufConn, addr string) error {
	if addr == "" {
		s.mu.Lock()
		serials := make([]string, 0, len(s.devs))
		for serial := range s.devs {
			serials = append(serials, serial)
		}
		s.mu.Unlock()
		for _, serial := range serials {
			s.Remove(serial)
		}
		return adbwire.WriteOkayData(c, "disconnected everything")
	}
	norm := addr
	if _, _, err := net.SplitHostPort(addr); err != nil {
		norm = addr + ":5555"
	}
	for _, serial := range []string{addr, norm} {
		if s.Remove(serial) == nil {
			return adbwire.WriteOkayData(c, "disconnected "+addr)
		}
	}
	return adbwire.WriteFail(c, fmt.Sprintf("no such device '%s'", norm))
}
