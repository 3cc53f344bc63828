package adbd

import (
	"fmt"
	"strconv"
	"strings"
)

// Parsing of host requests: which device a request is about, and picking
// it with the error texts of the real server.

// parseTransportSwitch parses the host:transport* and host:tport:* requests.
// tport variants answer with the 8-byte transport id as well.
func parseTransportSwitch(req string) (sel selector, tport, ok bool) {
	switch {
	case strings.HasPrefix(req, "host:tport:"):
		rest := strings.TrimPrefix(req, "host:tport:")
		switch {
		case strings.HasPrefix(rest, "serial:"):
			return selector{kind: selSerial, serial: strings.TrimPrefix(rest, "serial:")}, true, true
		case strings.HasPrefix(rest, "transport-id:"):
			id, err := strconv.ParseUint(strings.TrimPrefix(rest, "transport-id:"), 10, 64)
			return selector{kind: selID, id: id}, true, err == nil
		case rest == "usb":
			return selector{kind: selUSB}, true, true
		case rest == "local":
			return selector{kind: selLocal}, true, true
		case rest == "any":
			return selector{kind: selAny}, true, true
		}
	case strings.HasPrefix(req, "host:transport:"):
		return selector{kind: selSerial, serial: strings.TrimPrefix(req, "host:transport:")}, false, true
	case strings.HasPrefix(req, "host:transport-id:"):
		id, err := strconv.ParseUint(strings.TrimPrefix(req, "host:transport-id:"), 10, 64)
		return selector{kind: selID, id: id}, false, err == nil
	case req == "host:transport-usb":
		return selector{kind: selUSB}, false, true
	case req == "host:transport-local":
		return selector{kind: selLocal}, false, true
	case req == "host:transport-any":
		return selector{kind: selAny}, false, true
	}
	return selector{}, false, false
}

type selKind int

const (
	selAny selKind = iota
	selLocal
	selUSB
	selSerial
	selID
)

// selector is the device part of a host request: host:, host-usb:,
// host-local:, host-serial:<s>: or host-transport-id:<n>:.
type selector struct {
	kind   selKind
	serial string
	id     uint64
}

// parseHostRequest splits a host request into device selector and command.
func parseHostRequest(req string) (selector, string, bool) {
	switch {
	case strings.HasPrefix(req, "host:"):
		return selector{kind: selAny}, strings.TrimPrefix(req, "host:"), true
	case strings.HasPrefix(req, "host-usb:"):
		return selector{kind: selUSB}, strings.TrimPrefix(req, "host-usb:"), true
	case strings.HasPrefix(req, "host-local:"):
		return selector{kind: selLocal}, strings.TrimPrefix(req, "host-local:"), true
	case strings.HasPrefix(req, "host-transport-id:"):
		idStr, cmd, ok := strings.Cut(strings.TrimPrefix(req, "host-transport-id:"), ":")
		id, err := strconv.ParseUint(idStr, 10, 64)
		return selector{kind: selID, id: id}, cmd, ok && err == nil
	case strings.HasPrefix(req, "host-serial:"):
		serial, cmd, ok := splitSerial(strings.TrimPrefix(req, "host-serial:"))
		return selector{kind: selSerial, serial: serial}, cmd, ok
	}
	return selector{}, "", false
}

// splitSerial separates "<serial>:<command>" where the serial itself may
// contain colons ("127.0.0.1:5601"). Like adb's parse_host_service, a colon
// followed by digits up to the next colon belongs to the serial (a port),
// and "tcp:"/"udp:" prefixes and [ipv6] brackets are skipped over.
func splitSerial(s string) (serial, cmd string, ok bool) {
	i := 0
	for _, p := range []string{"tcp:", "udp:"} {
		if strings.HasPrefix(s, p) {
			i = len(p)
			break
		}
	}
	if i < len(s) && s[i] == '[' {
		end := strings.IndexByte(s[i:], ']')
		if end < 0 {
			return "", "", false
		}
		i += end + 1
	}
	colon := strings.IndexByte(s[i:], ':')
	if colon < 0 {
		return "", "", false
	}
	colon += i
	// A port: digits then another colon.
	j := colon + 1
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j > colon+1 && j < len(s) && s[j] == ':' {
		colon = j
	}
	return s[:colon], s[colon+1:], true
}

// acquire picks the device a request is about, with the same error texts as
// adb's acquire_one_transport. Unless anyState, only a device in state
// "device" is usable.
func (s *Server) acquire(sel selector, anyState bool) (*serverDevice, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var found *serverDevice
	switch sel.kind {
	case selSerial:
		found = s.devs[sel.serial]
		if found == nil {
			return nil, fmt.Sprintf("device '%s' not found", sel.serial)
		}
	case selID:
		for _, d := range s.devs {
			if d.id == sel.id {
				found = d
			}
		}
		if found == nil {
			return nil, fmt.Sprintf("no device with transport id '%d'", sel.id)
		}
	case selUSB:
		// Simulated devices are all network ("local") transports.
		return nil, "no devices found"
	case selAny, selLocal:
		for _, d := range s.devs {
			if found != nil {
				if sel.kind == selLocal {
					return nil, "more than one emulator"
				}
				return nil, "more than one device/emulator"
			}
			found = d
		}
		if found == nil {
			if sel.kind == selLocal {
				return nil, "no emulators found"
			}
			return nil, "no devices/emulators found"
		}
	}
	if !anyState {
		switch found.state {
		case stateUnauthorized:
			return nil, unauthorizedText
		case StateOffline:
			return nil, "device offline"
		}
	}
	return found, ""
}
