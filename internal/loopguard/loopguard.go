// Package loopguard is the front door shared by the pages solopi serves on
// this machine only (the agent-run console, the inspector): it listens on
// 127.0.0.1 (and ::1 on the same port when the host has IPv6) with a fresh
// random token, and guards every request: the Host header must be the
// address it listens on (no DNS rebinding), an Origin header, when
// present, must be its own origin (no cross-site request), and the token
// must be the one of the URL (compared in constant time).
package loopguard

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/solopi-dev/solopi/fault"
)

// Site is one listening loopback page.
type Site struct {
	token string
	port  int
	hosts map[string]bool // allowed Host headers
	lns   []net.Listener
}

// Listen takes a free port on the loopback interface; failures carry
// code (the caller's listen_failed code).
func Listen(code string) (*Site, error) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fault.Wrap(fault.Internal, code, "no randomness for the page's token", err)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fault.Wrap(fault.Failed, code, "cannot listen on 127.0.0.1", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	s := &Site{token: hex.EncodeToString(b[:]), port: port, lns: []net.Listener{ln},
		hosts: map[string]bool{"127.0.0.1:" + strconv.Itoa(port): true}}
	// The same port on ::1 when the host has IPv6; without it the page is
	// reached on 127.0.0.1 only.
	if ln6, err := net.Listen("tcp6", "[::1]:"+strconv.Itoa(port)); err == nil {
		s.lns = append(s.lns, ln6)
		s.hosts["[::1]:"+strconv.Itoa(port)] = true
	}
	return s, nil
}

// Token is the page's secret.
func (s *Site) Token() string { return s.token }

// URL is the page's address, token included.
func (s *Site) URL() string { return fmt.Sprintf("http://127.0.0.1:%d/?token=%s", s.port, s.token) }

// Serve serves srv on every listener until srv shuts down.
func (s *Site) Serve(srv *http.Server) {
	for _, l := range s.lns {
		go func() { _ = srv.Serve(l) }()
	}
}

// TokenOK compares t with the token in constant time.
func (s *Site) TokenOK(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.token)) == 1
}

// QueryToken is the token of ?token=.
func QueryToken(r *http.Request) string { return r.URL.Query().Get("token") }

// Guard refuses, with 403 and no detail, any request that is not for this
// page: a Host other than the address it listens on, a foreign Origin, or
// a missing or wrong token (as tokenOf reads it from the request). Every
// answer is marked not to be cached, sniffed, framed or referred.
func (s *Site) Guard(next http.Handler, tokenOf func(*http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("X-Frame-Options", "DENY")
		if !s.hosts[r.Host] {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !s.hosts[strings.TrimPrefix(o, "http://")] {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		if !s.TokenOK(tokenOf(r)) {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// JSONOnly refuses a body that is not JSON: a cross-site form cannot send
// one, and a script elsewhere cannot without a preflight the page never
// answers.
func JSONOnly(w http.ResponseWriter, r *http.Request) bool {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		http.Error(w, "requests are JSON", http.StatusUnsupportedMediaType)
		return false
	}
	return true
}

// ServePage answers an embedded page whose scripts carry nonce="{{NONCE}}":
// a fresh nonce per answer, and a policy that runs those scripts only and
// lets the page reach nothing but its own origin.
func ServePage(w http.ResponseWriter, html string) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		http.Error(w, "no randomness", http.StatusInternalServerError)
		return
	}
	nonce := base64.StdEncoding.EncodeToString(b[:])
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'nonce-"+nonce+"'; style-src 'unsafe-inline'; "+
		"img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = io.WriteString(w, strings.ReplaceAll(html, "{{NONCE}}", nonce))
}
