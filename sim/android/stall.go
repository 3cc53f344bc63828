package android

import (
	"context"
	"fmt"
	"time"
)

// commandStall holds back every run of one shell command (a fault): the
// command starts only after delay of device time, or, with delay 0, once
// the stall is released. A caller that goes away (its stream closed, its
// context cancelled) stops waiting and the command exits 130 without output,
// like a process killed before it wrote anything.
type commandStall struct {
	delay   time.Duration
	release chan struct{}
}

// StallCommand makes every following run of the shell command name (as
// typed: "screencap", "logcat") wait before it starts: for delay of device
// time, or until ReleaseCommand when delay is 0. It replaces an earlier
// stall of the same command and releases the runs that one held.
func (p *Phone) StallCommand(name string, delay time.Duration) error {
	if _, ok := p.commandTable()[name]; !ok {
		return fmt.Errorf("android: stall: no shell command %q", name)
	}
	if delay < 0 {
		return fmt.Errorf("android: stall: negative delay %v", delay)
	}
	p.view(func() {
		if old := p.stalls[name]; old != nil {
			close(old.release)
		}
		if p.stalls == nil {
			p.stalls = map[string]*commandStall{}
		}
		p.stalls[name] = &commandStall{delay: delay, release: make(chan struct{})}
	})
	return nil
}

// ReleaseCommand ends the stall of name: runs waiting for it start now and
// later runs start at once.
func (p *Phone) ReleaseCommand(name string) {
	p.view(func() {
		if s := p.stalls[name]; s != nil {
			close(s.release)
			delete(p.stalls, name)
		}
	})
}

// waitStall blocks a run of name while it is stalled; false means the
// caller went away first.
func (p *Phone) waitStall(ctx context.Context, name string) bool {
	var s *commandStall
	p.view(func() { s = p.stalls[name] })
	if s == nil {
		return true
	}
	wait, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-s.release:
			stop()
		case <-wait.Done():
		}
	}()
	if s.delay > 0 {
		_ = p.clk.Sleep(wait, s.delay)
	} else {
		<-wait.Done()
	}
	return ctx.Err() == nil
}
