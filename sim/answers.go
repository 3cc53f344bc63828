package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/protocol"
)

// AnswerFault makes SoloPi's query channel answer like a buggy, older or
// foreign build: the device still runs its real state machines, and the
// answers of the matching queries are edited on their way out. Hosts must
// survive such answers (refuse them with a clear error, never take them as
// a verdict), and these faults are how the tests prove it.
type AnswerFault struct {
	// Action is the scheme action ("harness", "config", "performance", …).
	Action string `json:"action"`
	// Query lists parameters the request must carry with these values
	// ({"type": "capabilities"}); the others are free.
	Query map[string]string `json:"query,omitempty"`
	// When lists answer fields (slash paths, see Set) that must hold these
	// JSON values for the fault to apply (the real answer is checked).
	When map[string]any `json:"when,omitempty"`
	// Set writes a value at each slash path of the answer ("run/state",
	// "configs/3/value"); missing objects on the way are created.
	Set map[string]any `json:"set,omitempty"`
	// Remove deletes the fields at these slash paths.
	Remove []string `json:"remove,omitempty"`
	// HTML answers NanoHTTPD's text/html fallback ("No Valid Listener")
	// instead, as SoloPi 0.x does for the resolvers it lacks.
	HTML bool `json:"html,omitempty"`
	// DelayMs holds the answer back this much device time (a busy app);
	// a caller that goes away stops the wait.
	DelayMs int64 `json:"delayMs,omitempty"`
	// Times is how many answers the fault edits before it expires (0: until
	// cleared).
	Times int `json:"times,omitempty"`
}

// answerFaults holds a device's active answer faults, in the order added,
// and the watchers of its answers.
type answerFaults struct {
	clk    clock.Clock
	mu     sync.Mutex
	faults []*AnswerFault
	log    eventLog[Answer]
}

// AddAnswerFault edits the answers of matching queries from now on.
func (d *Device) AddAnswerFault(f AnswerFault) error {
	if f.Action == "" {
		return errors.New("answer fault: action is required")
	}
	if f.Times < 0 || f.DelayMs < 0 {
		return errors.New("answer fault: times and delayMs must not be negative")
	}
	for p := range f.Set {
		if err := checkPath(p); err != nil {
			return err
		}
	}
	for _, p := range append(append([]string(nil), f.Remove...), keys(f.When)...) {
		if err := checkPath(p); err != nil {
			return err
		}
	}
	d.answers.mu.Lock()
	defer d.answers.mu.Unlock()
	d.answers.faults = append(d.answers.faults, &f)
	return nil
}

// ClearAnswerFaults restores the device's own answers.
func (d *Device) ClearAnswerFaults() {
	d.answers.mu.Lock()
	defer d.answers.mu.Unlock()
	d.answers.faults = nil
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func checkPath(p string) error {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.Contains(p, "//") {
		return fmt.Errorf("answer fault: bad field path %q (use a/b/0/c)", p)
	}
	return nil
}

// matching returns the faults that apply to a query (without using them).
func (af *answerFaults) matching(r *http.Request) []*AnswerFault {
	af.mu.Lock()
	defer af.mu.Unlock()
	if len(af.faults) == 0 {
		return nil
	}
	action, _ := strings.CutPrefix(r.URL.Path, protocol.HTTPPathPrefix)
	q := r.URL.Query()
	var out []*AnswerFault
	for _, f := range af.faults {
		if f.Action != action {
			continue
		}
		ok := true
		for k, v := range f.Query {
			ok = ok && q.Has(k) && q.Get(k) == v
		}
		if ok {
			out = append(out, f)
		}
	}
	return out
}

// spend counts one use of f, dropping it when it expires.
func (af *answerFaults) spend(f *AnswerFault) {
	af.mu.Lock()
	defer af.mu.Unlock()
	if f.Times == 0 {
		return
	}
	f.Times--
	if f.Times > 0 {
		return
	}
	for i, g := range af.faults {
		if g == f {
			af.faults = append(af.faults[:i:i], af.faults[i+1:]...)
			return
		}
	}
}

// wrap serves h with the answer faults applied.
func (af *answerFaults) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		faults := af.matching(r)
		if len(faults) == 0 && !af.log.watched() {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body, ctype := rec.Body.Bytes(), rec.Header().Get("Content-Type")
		var delay time.Duration
		for _, f := range faults {
			b, ct, applied := f.apply(body, ctype)
			if applied {
				body, ctype = b, ct
				delay += time.Duration(f.DelayMs) * time.Millisecond
				af.spend(f)
			}
		}
		if delay > 0 && af.clk.Sleep(r.Context(), delay) != nil {
			return // the caller went away
		}
		action, _ := strings.CutPrefix(r.URL.Path, protocol.HTTPPathPrefix)
		af.log.add(Answer{Action: action, Query: r.URL.Query(), Body: body})
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}

// nanoFallback is what SoloPi's HTTP server answers for a request no
// resolver handles.
const nanoFallback = `{"success": false, "error": "No Valid Listener"}`

// apply edits one answer; applied is false when the answer is not a JSON
// object or When does not hold.
func (f *AnswerFault) apply(body []byte, ctype string) (out []byte, outType string, applied bool) {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&doc) != nil {
		return body, ctype, false
	}
	if _, isObj := doc.(map[string]any); !isObj {
		return body, ctype, false
	}
	for p, want := range f.When {
		got, found := lookup(doc, p)
		if !found || !sameJSON(got, want) {
			return body, ctype, false
		}
	}
	if f.HTML {
		return []byte(nanoFallback), "text/html", true
	}
	for p, v := range f.Set {
		doc = setPath(doc, strings.Split(p, "/"), v)
	}
	for _, p := range f.Remove {
		doc = removePath(doc, strings.Split(p, "/"))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(doc) != nil {
		return body, ctype, false
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), ctype, true
}

func lookup(doc any, path string) (any, bool) {
	cur := doc
	for _, k := range strings.Split(path, "/") {
		switch c := cur.(type) {
		case map[string]any:
			v, found := c[k]
			if !found {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// sameJSON compares two values by their JSON text (json.Number and
// float64 alike).
func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return false
	}
	var u, v any
	if json.Unmarshal(x, &u) != nil || json.Unmarshal(y, &v) != nil {
		return false
	}
	return reflect.DeepEqual(u, v)
}

// setPath returns doc with v at path, creating objects on the way; an
// array index past the end appends.
func setPath(doc any, path []string, v any) any {
	if len(path) == 0 {
		return v
	}
	k := path[0]
	if arr, isArr := doc.([]any); isArr {
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 {
			return doc
		}
		if i >= len(arr) {
			return append(arr, setPath(nil, path[1:], v))
		}
		arr[i] = setPath(arr[i], path[1:], v)
		return arr
	}
	obj, isObj := doc.(map[string]any)
	if !isObj {
		obj = map[string]any{}
	}
	obj[k] = setPath(obj[k], path[1:], v)
	return obj
}

func removePath(doc any, path []string) any {
	k := path[0]
	switch c := doc.(type) {
	case map[string]any:
		if len(path) == 1 {
			delete(c, k)
		} else if v, found := c[k]; found {
			c[k] = removePath(v, path[1:])
		}
	case []any:
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 || i >= len(c) {
			return doc
		}
		if len(path) == 1 {
			return append(c[:i:i], c[i+1:]...)
		}
		c[i] = removePath(c[i], path[1:])
	}
	return doc
}
