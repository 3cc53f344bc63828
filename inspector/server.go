// Package inspector is `solopi inspect --serve`: a page on this machine
// only (internal/loopguard: loopback, a random token, Host and Origin
// checked) that shows the phone's current screen with its accessibility
// tree drawn over it, refreshed as the phone changes. A clicked node gets
// its selector, ready SoloPi case steps and a requirement checkpoint to
// copy. With a record file, the page's click, input and assert buttons
// act on the phone through an Agent session (typed actions only; the
// owner token stays in this process) and append each step to the file,
// a whole case after every step.
package inspector

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/internal/loopguard"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/agent"
	"github.com/solopi-dev/solopi/solopi/device"
)

//go:embed page.html
var pageHTML string

// Limits of what the server keeps and waits for.
const (
	keptSnapshots   = 8                // a click may name a screen a little older than the newest
	longPoll        = 20 * time.Second // a /snapshot request waits this long for a newer screen
	defaultInterval = time.Second
	maxActBody      = 16 << 10
)

// Options configure Serve.
type Options struct {
	Session *device.Session
	// RecordTo is the case file the page's actions are appended to; ""
	// serves the view only (no action reaches the phone).
	RecordTo string
	// Interval is the pause between two looks at the phone (default 1 s).
	Interval time.Duration
	// PollInterval is the Agent client's longest pause between polls.
	PollInterval time.Duration
}

// Result is the command's final object.
type Result struct {
	Success       bool       `json:"success"`
	URL           string     `json:"url"`
	Snapshots     int        `json:"snapshots"`
	CaptureErrors int        `json:"captureErrors"`
	LastError     *pageError `json:"lastError,omitempty"`
	Recording     *recording `json:"recording"`
}

// pageError is a failure as the page shows it: the code and message only.
type pageError struct {
	ErrorCode string `json:"errorCode"`
	Error     string `json:"error"`
}

func errorOf(err error) *pageError {
	e := fault.From(err)
	return &pageError{ErrorCode: e.Code, Error: e.Message}
}

// Server is one running inspector.
type Server struct {
	site     *loopguard.Site
	srv      *http.Server
	sess     *device.Session
	rec      *recorder
	interval time.Duration
	refresh  chan struct{}
	// phone is held by a look and by an action: an action brings SoloPi's
	// own screen up for a moment, which a look must not show.
	phone sync.Mutex

	mu       sync.Mutex
	snaps    []*Snapshot // newest last
	seq      int
	captures int
	failures int
	lastErr  *pageError
	// version counts the changes a viewer is told of: a new screen, a
	// new failure, a recovery.
	version int
	changed chan struct{} // closed and replaced on every change
	closed  bool
}

// Serve listens, calls onListen with the page's URL, shows the phone
// until ctx ends (Ctrl-C, SIGTERM), then ends the recording's Agent
// session and returns the final result.
func Serve(ctx context.Context, o Options, onListen func(url string)) (*Result, error) {
	s, err := start(o)
	if err != nil {
		return nil, err
	}
	onListen(s.site.URL())
	done := make(chan struct{})
	go func() { defer close(done); s.watch(ctx) }()
	<-ctx.Done()
	<-done
	return s.finish(ctx), nil
}

func start(o Options) (*Server, error) {
	if o.Session == nil {
		return nil, fault.New(fault.Internal, fault.CodeInternalError, "the inspector has no device session")
	}
	s := &Server{sess: o.Session, interval: o.Interval, refresh: make(chan struct{}, 1), changed: make(chan struct{})}
	if s.interval <= 0 {
		s.interval = defaultInterval
	}
	if o.RecordTo != "" {
		client := agent.NewAgentClient(o.Session.Device, agent.AgentOptions{Foreground: o.Session.Foreground, PollInterval: o.PollInterval})
		rec, err := newRecorder(client, o.RecordTo, o.PollInterval)
		if err != nil {
			client.Close()
			return nil, err
		}
		rec.phone = &s.phone
		s.rec = rec
	}
	site, err := loopguard.Listen(fault.CodeInspectorListenFailed)
	if err != nil {
		return nil, err
	}
	s.site = site
	s.srv = &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second}
	site.Serve(s.srv)
	return s, nil
}

// watch looks at the phone every interval (at once after an action)
// until ctx ends.
func (s *Server) watch(ctx context.Context) {
	clk := s.sess.Device.Clock()
	for ctx.Err() == nil {
		s.phone.Lock()
		snap, err := capture(ctx, s.sess)
		s.phone.Unlock()
		if ctx.Err() != nil {
			return
		}
		s.publish(snap, err)
		wait, cancel := context.WithCancel(ctx)
		go func() {
			select {
			case <-s.refresh:
				cancel()
			case <-wait.Done():
			}
		}()
		_ = clk.Sleep(wait, s.interval)
		cancel()
	}
}

// publish keeps a new snapshot (a screen identical to the newest one is
// not news) or the failure of a look.
func (s *Server) publish(snap *Snapshot, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.captures++
	news := false
	if err != nil {
		s.failures++
		e := errorOf(err)
		news = s.lastErr == nil || *s.lastErr != *e
		s.lastErr = e
	} else {
		news = s.lastErr != nil || len(s.snaps) == 0 || !sameScreen(s.snaps[len(s.snaps)-1], snap)
		s.lastErr = nil
		if news {
			s.seq++
			snap.Seq = s.seq
			s.snaps = append(s.snaps, snap)
			if len(s.snaps) > keptSnapshots {
				s.snaps = s.snaps[1:]
			}
		}
	}
	if news {
		s.version++
		close(s.changed)
		s.changed = make(chan struct{})
	}
}

func sameScreen(a, b *Snapshot) bool {
	if a.SHA256 != b.SHA256 || len(a.Nodes) != len(b.Nodes) {
		return false
	}
	ja, _ := json.Marshal(a.Nodes)
	jb, _ := json.Marshal(b.Nodes)
	return bytes.Equal(ja, jb)
}

// snapshot returns the kept snapshot seq (nil when gone).
func (s *Server) snapshot(seq int) *Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sn := range s.snaps {
		if sn.Seq == seq {
			return sn
		}
	}
	return nil
}

// finish stops the server and ends the recording.
func (s *Server) finish(ctx context.Context) *Result {
	s.mu.Lock()
	s.closed = true
	close(s.changed)
	s.changed = make(chan struct{})
	res := &Result{Success: true, URL: s.site.URL(), Snapshots: s.seq, CaptureErrors: s.failures, LastError: s.lastErr}
	s.mu.Unlock()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	_ = s.srv.Shutdown(sctx)
	cancel()
	if s.rec != nil {
		endErr := s.rec.close(ctx)
		s.rec.client.Close()
		res.Recording = s.rec.status()
		if endErr != nil {
			res.Recording.EndError = errorOf(endErr)
		}
	}
	return res
}

func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("GET /snapshot", s.snapshotHandler)
	mux.HandleFunc("GET /screen/{name}", s.screen)
	mux.HandleFunc("GET /suggest", s.suggest)
	mux.HandleFunc("POST /act", s.actHandler)
	return s.site.Guard(mux, loopguard.QueryToken)
}

func (s *Server) page(w http.ResponseWriter, _ *http.Request) {
	loopguard.ServePage(w, pageHTML)
}

// snapshotView is what /snapshot answers.
type snapshotView struct {
	*Snapshot
	Version   int        `json:"version"`
	Screen    string     `json:"screen,omitempty"`
	Error     *pageError `json:"error"`
	Recording bool       `json:"recording"`
	Closed    bool       `json:"closed"`
}

// snapshotHandler answers the newest snapshot and the phone's error once
// their version is newer than ?after= (waiting up to longPoll for one).
func (s *Server) snapshotHandler(w http.ResponseWriter, r *http.Request) {
	after, _ := strconv.Atoi(r.URL.Query().Get("after"))
	deadline := time.NewTimer(longPoll)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		v := snapshotView{Version: s.version, Error: s.lastErr, Recording: s.rec != nil, Closed: s.closed}
		if n := len(s.snaps); n > 0 {
			v.Snapshot = s.snaps[n-1]
			v.Screen = "/screen/" + v.SHA256 + ".png"
		}
		changed := s.changed
		s.mu.Unlock()
		if v.Closed || v.Version > after {
			writeJSON(w, http.StatusOK, v)
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			writeJSON(w, http.StatusOK, v)
			return
		case <-r.Context().Done():
			return
		}
	}
}

func (s *Server) screen(w http.ResponseWriter, r *http.Request) {
	sha := strings.TrimSuffix(r.PathValue("name"), ".png")
	s.mu.Lock()
	var img []byte
	for _, sn := range s.snaps {
		if sn.SHA256 == sha {
			img = sn.png
		}
	}
	s.mu.Unlock()
	if img == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	_, _ = w.Write(img)
}

// suggest is the panel of a clicked node: ?seq=&node=[&text=].
func (s *Server) suggest(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	seq, err1 := strconv.Atoi(q.Get("seq"))
	node, err2 := strconv.Atoi(q.Get("node"))
	if err1 != nil || err2 != nil {
		writeJSON(w, http.StatusBadRequest, &pageError{ErrorCode: fault.CodeInvalidParameter, Error: "seq and node are numbers"})
		return
	}
	sn := s.snapshot(seq)
	if sn == nil {
		writeJSON(w, http.StatusGone, &pageError{ErrorCode: protocol.ErrStaleObservation, Error: "that screen is gone; pick the node again"})
		return
	}
	sg, err := suggest(sn.Nodes, node, q.Get("text"))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, errorOf(err))
		return
	}
	writeJSON(w, http.StatusOK, sg)
}

// actHandler performs and records one action (record mode only).
func (s *Server) actHandler(w http.ResponseWriter, r *http.Request) {
	if !loopguard.JSONOnly(w, r) {
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxActBody+1))
	if err != nil {
		return
	}
	req, err := parseActRequest(body)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, errorOf(err))
		return
	}
	if s.rec == nil {
		writeJSON(w, http.StatusConflict, &pageError{ErrorCode: fault.CodeNotRecording, Error: "the inspector records only with --record-to FILE"})
		return
	}
	sn := s.snapshot(req.Seq)
	if sn == nil {
		writeJSON(w, http.StatusGone, &pageError{ErrorCode: protocol.ErrStaleObservation, Error: "that screen is gone; pick the node again"})
		return
	}
	done, err := s.rec.do(r.Context(), sn.Nodes, req.Node, stepAction{kind: req.Action, text: req.Text})
	select {
	case s.refresh <- struct{}{}:
	default:
	}
	if err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, errorOf(err))
		return
	}
	writeJSON(w, http.StatusOK, done)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, status = []byte(`{"errorCode":"internal_error","error":"unencodable answer"}`), http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, "%s\n", b)
}

// Announce writes the page's address as one JSON line (for stderr):
// {"inspector":{"url":"http://127.0.0.1:PORT/?token=…"}}.
func Announce(w io.Writer, url string) error {
	b, err := json.Marshal(map[string]any{"inspector": map[string]string{"url": url}})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
