package console

import (
	_ "embed"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/internal/loopguard"
	"github.com/solopi-dev/solopi/report"
)

//go:embed page.html
var pageHTML string

// Announce writes the console's address as one JSON line (for stderr):
// {"console":{"url":"http://127.0.0.1:PORT/?token=…"}}.
func (s *Server) Announce(w io.Writer) error {
	_, err := fmt.Fprintf(w, "%s\n", marshal(map[string]any{"console": map[string]string{"url": s.url}}))
	return err
}

func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("GET /events", s.stream)
	mux.HandleFunc("GET /screens/{name}", s.screen)
	mux.HandleFunc("POST /answer", s.answerHandler)
	mux.HandleFunc("POST /stop", s.stopHandler)
	mux.HandleFunc("GET /evidence/{token}/report.html", s.evidence)
	mux.HandleFunc("GET /evidence/{token}/screens/{name}", s.evidence)
	return s.guard(mux)
}

// guard is the loopback guard (Host, Origin, token); the report is served
// with the token as the first segment of its path, so that its relative
// links to its screenshots keep it.
func (s *Server) guard(next http.Handler) http.Handler {
	return s.site.Guard(next, func(r *http.Request) string {
		if rest, ok := strings.CutPrefix(r.URL.Path, "/evidence/"); ok {
			token, _, _ := strings.Cut(rest, "/")
			return token
		}
		return loopguard.QueryToken(r)
	})
}

func (s *Server) page(w http.ResponseWriter, _ *http.Request) {
	loopguard.ServePage(w, pageHTML)
}

// stream sends the history after Last-Event-ID, then every new message,
// until the client goes or the console closes.
func (s *Server) stream(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	last, _ := strconv.Atoi(r.Header.Get("Last-Event-ID"))
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	for {
		msgs, changed, closed := s.since(last)
		for _, m := range msgs {
			if _, err := fmt.Fprintf(w, "id: %d\ndata: %s\n\n", m.Seq, marshal(m)); err != nil {
				return
			}
			last = m.Seq
		}
		fl.Flush()
		if closed {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-changed:
		}
	}
}

func (s *Server) screen(w http.ResponseWriter, r *http.Request) {
	sha := strings.TrimSuffix(r.PathValue("name"), ".png")
	s.mu.Lock()
	png, ok := s.screens[sha]
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	_, _ = w.Write(png)
}

// stopHandler is the stop button: {"stop":true} cancels the run once.
func (s *Server) stopHandler(w http.ResponseWriter, r *http.Request) {
	if !loopguard.JSONOnly(w, r) {
		return
	}
	var body struct {
		Stop bool `json:"stop"`
	}
	if err := canonjson.Read(r.Body, 4096, &body); err != nil || !body.Stop {
		http.Error(w, "bad stop request", http.StatusBadRequest)
		return
	}
	if !s.requestStop() {
		http.Error(w, "nothing to stop", http.StatusConflict)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// evidence serves the run's report.html and the screenshots beside it,
// once Finish named it; nothing else of the directory.
func (s *Server) evidence(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	rep := s.report
	s.mu.Unlock()
	if rep == "" {
		http.NotFound(w, r)
		return
	}
	path, ctype := rep, "text/html; charset=utf-8"
	if name := r.PathValue("name"); name != "" {
		sha, ok := strings.CutSuffix(name, ".png")
		if !ok || len(sha) != 64 || strings.Trim(sha, "0123456789abcdef") != "" {
			http.NotFound(w, r)
			return
		}
		path, ctype = filepath.Join(filepath.Dir(rep), report.ScreensDir, name), "image/png"
	}
	b, err := os.ReadFile(path)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", ctype)
	_, _ = w.Write(b)
}

func (s *Server) answerHandler(w http.ResponseWriter, r *http.Request) {
	if !loopguard.JSONOnly(w, r) {
		return
	}
	var body struct {
		ID     int    `json:"id"`
		Answer string `json:"answer"`
	}
	if err := canonjson.Read(r.Body, 4096, &body); err != nil {
		http.Error(w, "bad answer", http.StatusBadRequest)
		return
	}
	if !s.answer(body.ID, body.Answer) {
		http.Error(w, "no such open prompt", http.StatusConflict)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
