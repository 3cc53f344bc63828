// Package console is the live view of a pure-vision run: a page on the
// loopback interface that streams the run as it happens (server-sent
// events) — the current screenshot with the pending action drawn on it,
// the step list, the phase and the counters — and answers the runtime's
// confirmation and takeover prompts (approve, reject, "I took over,
// continue").
//
// It is reachable from this machine only: it listens on 127.0.0.1 (and
// ::1 on the same port when the host has IPv6), every request must carry
// the random token of the URL as ?token=, the Host header must be the
// address it listens on (no DNS rebinding) and an Origin header, when
// present, must be its own origin (no cross-site request). Answers are
// POSTed as JSON, which a cross-site form cannot send.
package console

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/internal/loopguard"
)

// Limits of what the console keeps for late or reconnecting viewers.
const (
	maxEvents  = 5000
	maxScreens = 32
)

// Server is one running console.
type Server struct {
	site  *loopguard.Site
	token string
	url   string
	srv   *http.Server

	mu      sync.Mutex
	events  []message // history, seq = index+1+dropped
	dropped int
	changed chan struct{} // closed and replaced on every new message
	screens map[string][]byte
	order   []string // screen digests, oldest first
	prompt  *prompt
	nextID  int
	closed  bool
	stop    chan struct{} // closed by Close: open prompts are withdrawn
	// onStop cancels the run (the stop button); nil when the command
	// offers none. stopped: it was pressed.
	onStop  func()
	stopped bool
	// report is the run's report.html once Finish named it, served
	// under /evidence/ with the screenshots beside it.
	report string
}

// message is one server-sent event: Kind says what Data is.
type message struct {
	Seq  int    `json:"seq"`
	Kind string `json:"kind"`
	Data any    `json:"data"`
}

// Message kinds.
const (
	kindTask     = "task"     // {title}
	kindAgent    = "agent"    // an agentloop.AgentEvent
	kindScreen   = "screen"   // {sha256, width, height}
	kindPrompt   = "prompt"   // {id, type: confirm|takeover, text}
	kindAnswered = "answered" // {id, answer, by}
	kindFinished = "finished" // {outcome, message}
	kindStop     = "stop"     // {available} or {requested, by}
	kindFinal    = "final"    // {outcome, message, exitCode, report, reportUrl, reportError}
)

type prompt struct {
	id     int
	typ    string
	answer chan string
}

// Start listens on the loopback interface (port 0: any free port) and
// serves the console until Close. title is shown at the top (the task).
func Start(title string) (*Server, error) {
	site, err := loopguard.Listen(fault.CodeConsoleListenFailed)
	if err != nil {
		return nil, err
	}
	s := &Server{site: site, token: site.Token(), url: site.URL(), changed: make(chan struct{}), stop: make(chan struct{}),
		screens: map[string][]byte{}}
	s.srv = &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second}
	site.Serve(s.srv)
	s.publish(kindTask, map[string]any{"title": title})
	return s, nil
}

// URL is the console's address, token included.
func (s *Server) URL() string { return s.url }

// Close withdraws any open prompt and stops the server; open event
// streams end.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.prompt = nil
	close(s.stop)
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}

// publish appends a message for every viewer.
func (s *Server) publish(kind string, data any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seq := s.dropped + len(s.events) + 1
	s.events = append(s.events, message{Seq: seq, Kind: kind, Data: data})
	if len(s.events) > maxEvents {
		// Keep the start (the task) and the newest events.
		n := len(s.events) - maxEvents
		s.events = append(s.events[:1], s.events[1+n:]...)
		s.dropped += n
	}
	close(s.changed)
	s.changed = make(chan struct{})
}

// since returns the messages after seq and a channel that closes on the
// next one.
func (s *Server) since(seq int) ([]message, <-chan struct{}, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []message
	for _, m := range s.events {
		if m.Seq > seq {
			out = append(out, m)
		}
	}
	return out, s.changed, s.closed
}

// OnEvent is the runtime's event observer (agentloop.Config.OnEvent).
func (s *Server) OnEvent(ev agentloop.AgentEvent) {
	s.publish(kindAgent, ev)
	if ev.Type == agentloop.EvFinish {
		s.publish(kindFinished, map[string]any{"outcome": ev.Payload["outcome"], "message": ev.Payload["message"]})
	}
}

// OnScreen keeps a screenshot for the viewers (agentloop.ObserveScreens).
func (s *Server) OnScreen(sc *agentloop.Screen) {
	if sc == nil || len(sc.SHA256) != 64 {
		return
	}
	s.mu.Lock()
	_, known := s.screens[sc.SHA256]
	if !known {
		s.screens[sc.SHA256] = sc.PNG
		s.order = append(s.order, sc.SHA256)
		if len(s.order) > maxScreens {
			delete(s.screens, s.order[0])
			s.order = s.order[1:]
		}
	}
	s.mu.Unlock()
	s.publish(kindScreen, map[string]any{"sha256": sc.SHA256, "width": sc.Width(), "height": sc.Height()})
}

// Confirm asks the viewer to approve or reject an action
// (agentloop.Confirmer).
func (s *Server) Confirm(ctx context.Context, question string) (bool, error) {
	a, err := s.ask(ctx, "confirm", question)
	return a == "approve", err
}

// TakeOver asks the viewer to act on the phone and say when done
// (agentloop.Confirmer); "abort" ends the task.
func (s *Server) TakeOver(ctx context.Context, message string) (bool, error) {
	a, err := s.ask(ctx, "takeover", message)
	return a == "done", err
}

var errClosed = errors.New("the console is closed")

func (s *Server) ask(ctx context.Context, typ, text string) (string, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return "", errClosed
	}
	s.nextID++
	p := &prompt{id: s.nextID, typ: typ, answer: make(chan string, 1)}
	s.prompt = p
	s.mu.Unlock()
	s.publish(kindPrompt, map[string]any{"id": p.id, "type": typ, "text": text})
	select {
	case a := <-p.answer:
		return a, nil
	case <-s.stop:
		return "", errClosed
	case <-ctx.Done():
		s.mu.Lock()
		if s.prompt == p {
			s.prompt = nil
		}
		s.mu.Unlock()
		s.publish(kindAnswered, map[string]any{"id": p.id, "answer": "withdrawn", "by": "elsewhere"})
		return "", ctx.Err()
	}
}

// OnStop offers a stop button on the page: pressing it calls stop once
// (the command cancels its run as Ctrl-C does). Call it before the run
// starts.
func (s *Server) OnStop(stop func()) {
	s.mu.Lock()
	s.onStop = stop
	s.mu.Unlock()
	s.publish(kindStop, map[string]any{"available": true})
}

// requestStop calls the stop hook once; false when there is none, the
// run was already stopped or the console is closed.
func (s *Server) requestStop() bool {
	s.mu.Lock()
	stop := s.onStop
	ok := stop != nil && !s.stopped && !s.closed
	if ok {
		s.stopped = true
	}
	s.mu.Unlock()
	if !ok {
		return false
	}
	s.publish(kindStop, map[string]any{"requested": true, "by": "console"})
	stop()
	return true
}

// Final is the end of the command as the page shows it after the run's
// process is gone.
type Final struct {
	Outcome  string
	Message  string
	ExitCode int
	// Report is the path of report.html ("" when none was written, then
	// ReportError says why, or nothing when none was asked for).
	Report      string
	ReportError string
}

// Finish publishes the command's end: the page shows the outcome and the
// report (its path, and a link served by the console until Close) and
// stops listening, so it stays readable when the command exits. Call it
// before Close.
func (s *Server) Finish(f Final) {
	data := map[string]any{"outcome": f.Outcome, "message": f.Message, "exitCode": f.ExitCode, "report": f.Report, "reportError": f.ReportError}
	if f.Report != "" {
		s.mu.Lock()
		s.report = f.Report
		s.mu.Unlock()
		data["reportUrl"] = "/evidence/" + s.token + "/report.html"
	}
	s.publish(kindFinal, data)
}

// answer resolves the open prompt id; false when it is not open or the
// answer does not fit its type.
func (s *Server) answer(id int, a string) bool {
	s.mu.Lock()
	p := s.prompt
	ok := p != nil && p.id == id && (p.typ == "confirm" && (a == "approve" || a == "reject") ||
		p.typ == "takeover" && (a == "done" || a == "abort"))
	if ok {
		s.prompt = nil
	}
	s.mu.Unlock()
	if !ok {
		return false
	}
	p.answer <- a
	s.publish(kindAnswered, map[string]any{"id": id, "answer": a, "by": "console"})
	return true
}

func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"error": "unencodable event"})
	}
	return b
}
