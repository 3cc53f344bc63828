package adb

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Device states as the server spells them in devices-l and get-state.
const (
	stateDevice       = "device"
	stateOffline      = "offline"
	stateUnauthorized = "unauthorized"
	stateNoPerm       = "no permissions"
)

// DeviceInfo is one line of `host:devices-l`.
type DeviceInfo struct {
	Serial      string
	State       string // "device", "offline", "unauthorized", "no permissions", "recovery", ...
	Product     string
	Model       string
	Device      string
	TransportID uint64            // 0 when the server did not report one
	Extra       map[string]string // other key:value fields (usb:1-1, ...); bare words map to ""
}

// Version returns the server's protocol version (41 for every server since
// 2018).
func (c *Client) Version(ctx context.Context) (int, error) {
	p, err := c.hostQuery(ctx, "version", "", "host:version")
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(string(p), 16, 32)
	if err != nil {
		return 0, fmt.Errorf("adb: version: %w: %q is not hex", errProtocol, p)
	}
	return int(v), nil
}

// Devices lists the devices the server knows, in every state.
func (c *Client) Devices(ctx context.Context) ([]DeviceInfo, error) {
	p, err := c.hostQuery(ctx, "list devices", "", "host:devices-l")
	if err != nil {
		return nil, err
	}
	return parseDevicesL(string(p)), nil
}

// parseDevicesL parses the devices-l payload: one device per line, the
// serial (padded to 22 columns with spaces, or followed by a tab in the
// short form), the state, then key:value words.
func parseDevicesL(s string) []DeviceInfo {
	var out []DeviceInfo
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		var serial, rest string
		if i := strings.IndexByte(line, '\t'); i >= 0 && strings.TrimSpace(line[:i]) != "" {
			serial, rest = strings.TrimSpace(line[:i]), line[i+1:]
		} else {
			f := strings.Fields(line)
			serial = f[0]
			rest = strings.TrimLeftFunc(line, unicode.IsSpace)[len(serial):]
		}
		rest = strings.TrimSpace(rest)
		d := DeviceInfo{Serial: serial}
		// "no permissions (reason); see [url]" is the one state with spaces.
		if strings.HasPrefix(rest, stateNoPerm) {
			d.State = stateNoPerm
			rest = rest[len(stateNoPerm):]
			if j := strings.IndexByte(rest, ']'); j >= 0 && strings.HasPrefix(strings.TrimSpace(rest), "(") {
				d.Extra = map[string]string{"reason": strings.TrimSpace(rest[:j+1])}
				rest = rest[j+1:]
			}
		} else if f := strings.Fields(rest); len(f) > 0 {
			d.State = f[0]
			rest = rest[strings.Index(rest, f[0])+len(f[0]):]
		}
		for _, w := range strings.Fields(rest) {
			k, v, _ := strings.Cut(w, ":")
			switch k {
			case "product":
				d.Product = v
			case "model":
				d.Model = v
			case "device":
				d.Device = v
			case "transport_id":
				if id, err := strconv.ParseUint(v, 10, 64); err == nil {
					d.TransportID = id
					continue
				}
				fallthrough
			default:
				if d.Extra == nil {
					d.Extra = map[string]string{}
				}
				d.Extra[k] = v
			}
		}
		out = append(out, d)
	}
	return out
}

// Connect asks the server to connect to a network device (adb connect).
// The server answers OKAY even on failure, so the text decides.
func (c *Client) Connect(ctx context.Context, hostport string) error {
	return c.connectOp(ctx, "connect", hostport, "connected to ", "already connected to ")
}

// Disconnect drops a network device (adb disconnect).
func (c *Client) Disconnect(ctx context.Context, hostport string) error {
	return c.connectOp(ctx, "disconnect", hostport, "disconnected ")
}

func (c *Client) connectOp(ctx context.Context, op, hostport string, okPrefixes ...string) error {
	p, err := c.hostQuery(ctx, op, "", "host:"+op+":"+hostport)
	if err != nil {
		var fe *FailError
		if errors.As(err, &fe) {
			return &connectError{Op: op, Addr: hostport, Msg: fe.Msg}
		}
		return err
	}
	msg := strings.TrimSpace(string(p))
	for _, pre := range okPrefixes {
		if strings.HasPrefix(msg, pre) {
			return nil
		}
	}
	return &connectError{Op: op, Addr: hostport, Msg: msg}
}

// GetState returns the device's state ("device", "offline", ...). An empty
// serial asks about the only device.
func (c *Client) GetState(ctx context.Context, serial string) (string, error) {
	req := "host:get-state"
	if serial != "" {
		req = "host-serial:" + serial + ":get-state"
	}
	p, err := c.hostQuery(ctx, "get-state", serial, req)
	if err != nil {
		return "", err
	}
	return string(p), nil
}

// Features returns the features the device advertised in its banner.
func (c *Client) Features(ctx context.Context, serial string) ([]string, error) {
	p, err := c.hostQuery(ctx, "features", serial, "host-serial:"+serial+":features")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range strings.Split(strings.TrimSpace(string(p)), ",") {
		if f != "" {
			out = append(out, f)
		}
	}
	return out, nil
}
