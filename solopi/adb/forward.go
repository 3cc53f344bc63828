package adb

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Forward installs a server-side listener `local` that forwards to `remote`
// on the device (adb forward), e.g. Forward(ctx, s, "tcp:0", "tcp:23342").
// It returns the bound local port ("42315"), which matters for tcp:0. The
// listener stays in the server until KillForward or the server exits, so
// prefer Device.DialTCP, which leaves nothing behind.
func (c *Client) Forward(ctx context.Context, serial, local, remote string) (string, error) {
	op := "forward " + local + " " + remote
	cn, err := c.hostRequest(ctx, op, serial, "host-serial:"+serial+":forward:"+local+";"+remote)
	if err != nil {
		return "", err
	}
	defer cn.Close()
	// The first OKAY accepted the request; the second says the listener is
	// installed (or FAIL says why not, e.g. "cannot rebind existing socket").
	if msg, err := cn.status(); err != nil {
		if errors.Is(err, errFail) {
			return "", classifyFail(op, serial, "forward", msg)
		}
		return "", fmt.Errorf("adb: %s: %w", op, cn.ctxErr(err))
	}
	p, err := cn.hexPayload()
	if err != nil {
		return "", fmt.Errorf("adb: %s: reading bound port: %w", op, cn.ctxErr(err))
	}
	return strings.TrimSpace(string(p)), nil
}

// KillForward removes the listener `local` ("tcp:42315") installed by Forward.
func (c *Client) KillForward(ctx context.Context, serial, local string) error {
	op := "killforward " + local
	cn, err := c.hostRequest(ctx, op, serial, "host-serial:"+serial+":killforward:"+local)
	if err != nil {
		return err
	}
	defer cn.Close()
	if msg, err := cn.status(); err != nil {
		if errors.Is(err, errFail) {
			return classifyFail(op, serial, "killforward", msg)
		}
		return fmt.Errorf("adb: %s: %w", op, cn.ctxErr(err))
	}
	return nil
}
