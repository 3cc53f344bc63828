package agentfake

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/protocol"
)

// ---- mutations (invisible answers: only state changes are observable) ----

func (d *Device) mutate(q map[string]string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.mutations = append(d.mutations, Mutation{Type: q["type"], Params: q})
	switch q["type"] {
	case protocol.AgentStart:
		d.startLocked(q)
	case protocol.AgentAct:
		d.actLocked(q)
	case protocol.AgentPause, protocol.AgentResume, protocol.AgentEnd, protocol.AgentCancel:
		d.controlLocked(q)
	}
}

func (d *Device) startLocked(q map[string]string) {
	tok, ok := q["ownerToken"]
	if !ok || tok == "" {
		return // missing_parameter
	}
	var maxSteps, maxRep, maxNo, unused int64
	type bound struct {
		r   protocol.Range
		dst *int64
	}
	for _, b := range []bound{
		{protocol.AgentMaxSteps, &maxSteps}, {protocol.AgentMaxDurationMs, &unused}, {protocol.AgentIdleTimeoutMs, &unused},
		{protocol.AgentMaxRepeatedActions, &maxRep}, {protocol.AgentMaxNoProgressSteps, &maxNo},
	} {
		v, present := q[b.r.Name]
		if !present {
			*b.dst = b.r.Default
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || !b.r.Contains(n) {
			return // invalid_parameter
		}
		*b.dst = n
	}
	if d.sess != nil && isLive(d.sess.state) {
		return // session_conflict
	}
	if len(tok) < 16 {
		return // invalid_owner_token
	}
	if d.LeaseBusy {
		return // lease_conflict
	}
	d.gen++
	id := "agent-session-" + uuid4()
	dir := SolopiDir + "/agent-sessions/" + id
	now := d.nowLocked()
	d.sess = &session{id: id, token: tok, gen: d.gen, state: "active", startedAt: now, lastActivity: now,
		maxSteps: maxSteps, maxRepeated: maxRep, maxNoProgress: maxNo, receipts: map[string]map[string]any{},
		leaseHeld: true, sessionDir: dir, timelinePath: dir + "/timeline.jsonl"}
	d.tr.Files.Put(d.sess.timelinePath, nil)
	d.appendEventLocked("session_started", "", "", nil)
	if d.NoFirstObservation {
		return
	}
	s := d.sess
	go func() {
		ok := d.waitRoot(nil)
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.sess != s || !isLive(s.state) {
			return
		}
		if !ok {
			d.terminateLocked("failed", "page_root_unavailable")
			return
		}
		o, sig, frame := d.newObservationLocked()
		d.setCurrentLocked(o, sig, frame)
		d.appendEventLocked("observation_created", "", o["observationId"].(string), o)
	}()
}

// identityLocked: "" when the caller owns the current session.
func (d *Device) identityLocked(q map[string]string) (code, msg string) {
	if d.sess == nil || q["sessionId"] != d.sess.id {
		return protocol.ErrSessionNotFound, "sessionId does not identify the current session"
	}
	if q["ownerToken"] != d.sess.token {
		return protocol.ErrOwnerMismatch, "ownerToken does not own this session"
	}
	return "", ""
}

func (d *Device) controlLocked(q map[string]string) {
	if c, _ := d.identityLocked(q); c != "" {
		return
	}
	s := d.sess
	if !isLive(s.state) {
		return // terminal_session
	}
	switch q["type"] {
	case protocol.AgentPause:
		if s.state == "active" {
			s.state = "paused"
			s.lastActivity = d.nowLocked()
			d.appendEventLocked("session_paused", "", obsID(s), nil)
		}
	case protocol.AgentResume:
		if s.state == "paused" {
			s.state = "active"
			s.lastActivity = d.nowLocked()
			d.appendEventLocked("session_resumed", "", obsID(s), nil)
		}
	case protocol.AgentEnd:
		if s.state != "acting" {
			d.terminateLocked("ended", "client_end")
		}
	case protocol.AgentCancel:
		d.terminateLocked("cancelled", "client_cancel")
	}
}

func obsID(s *session) string {
	if s.obs == nil {
		return ""
	}
	return s.obs["observationId"].(string)
}

func (d *Device) actLocked(q map[string]string) {
	for _, k := range []string{"sessionId", "ownerToken", "stepId", "observationId", "action"} {
		if q[k] == "" {
			return // missing_parameter (invisible)
		}
	}
	var args protocol.ActionArgs
	arguments := map[string]any{}
	for _, k := range []string{"nodeId", "text", "direction"} {
		if v, ok := q[k]; ok {
			v := v
			arguments[k] = v
			switch k {
			case "nodeId":
				args.NodeID = &v
			case "text":
				args.Text = &v
			case "direction":
				args.Direction = &v
			}
		}
	}
	for _, k := range []string{"durationMs", "distance"} {
		if v, ok := q[k]; ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return // invalid_action "<key> must be an integer" (invisible)
			}
			arguments[k] = n
			if k == "durationMs" {
				args.DurationMs = &n
			} else {
				args.Distance = &n
			}
		}
	}
	gen := int64(-1)
	if d.sess != nil {
		gen = d.sess.gen
	}
	go d.runAct(q, args, arguments, gen)
}

// runAct is the act pipeline.
func (d *Device) runAct(q map[string]string, args protocol.ActionArgs, arguments map[string]any, gen int64) {
	ok := d.waitRoot(nil)
	d.mu.Lock()
	defer d.mu.Unlock()
	if c, _ := d.identityLocked(q); c != "" || d.sess.gen != gen {
		return // identity rejections are not stored
	}
	s := d.sess
	stepID, action := q["stepId"], q["action"]
	if _, exists := s.receipts[stepID]; exists {
		return // idempotent: the stored receipt stands, no second execution
	}
	receipt := map[string]any{"stepId": stepID, "observationId": q["observationId"],
		"action": map[string]any{"type": action, "arguments": arguments}, "acceptedAt": d.nowLocked()}
	reject := func(code, msg string) {
		receipt["status"], receipt["errorCode"], receipt["error"], receipt["finishedAt"] = "rejected", code, msg, d.nowLocked()
		s.receipts[stepID] = receipt
		d.appendEventLocked("action_rejected", stepID, q["observationId"], receipt)
	}
	if !ok {
		// Root unavailable: begin then fail (simplified: only when active).
		if s.state == "active" {
			receipt["status"], receipt["errorCode"], receipt["error"], receipt["finishedAt"] = "failed", "action_failed",
				"Controllable foreground page root is unavailable", d.nowLocked()
			s.receipts[stepID] = receipt
			d.appendEventLocked("action_failed", stepID, q["observationId"], receipt)
			d.terminateLocked("failed", "action_failed")
		}
		return
	}
	_, freshSig, _ := d.pageLocked()
	switch {
	case s.state == "paused":
		reject(protocol.ErrSessionPaused, "The session is paused")
		return
	case s.state == "acting":
		reject(protocol.ErrSessionBusy, "An action is still executing")
		return
	case s.state != "active":
		reject(protocol.ErrTerminalSession, "The session is already terminal")
		return
	case !protocol.IsTypedAction(action):
		reject(protocol.ErrUnsupportedAction, "Only phase-one typed actions are allowed")
		return
	}
	if msg := protocol.ValidateAction(action, args); msg != "" {
		reject(protocol.ErrInvalidAction, msg)
		return
	}
	if s.obs == nil || s.consumed || q["observationId"] != obsID(s) || freshSig != s.obsSig {
		reject(protocol.ErrStaleObservation, "The action must reference the current unchanged observation")
		return
	}
	if s.accepted >= s.maxSteps {
		reject(protocol.ErrStepBudgetExhausted, "The session step budget is exhausted")
		d.terminateLocked("failed", "step_budget_exhausted")
		return
	}
	sig := protocol.ActionSignature(action, args)
	rep := int64(1)
	if sig == s.lastActSig {
		rep = s.repeat + 1
	}
	if rep > s.maxRepeated {
		reject(protocol.ErrLoopDetected, "Repeated action limit reached")
		d.terminateLocked("failed", "loop_detected")
		return
	}
	s.lastActSig, s.repeat = sig, rep
	s.consumed = true
	s.accepted++
	s.state = "acting"
	s.lastActivity = d.nowLocked()
	receipt["status"] = "accepted"
	s.receipts[stepID] = receipt
	d.appendEventLocked("action_accepted", stepID, q["observationId"], receipt)
	cancel := make(chan struct{})
	s.cancelAct = cancel
	frame := s.frame
	preSig := s.obsSig

	d.mu.Unlock()
	select {
	case <-cancel:
	case <-time.After(d.ActDelay):
	}
	d.mu.Lock()
	if d.sess != s || s.gen != gen || s.state != "acting" {
		return // cancelled or expired while acting: the receipt stays accepted
	}
	s.cancelAct = nil
	fail := func(msg string) {
		receipt["status"], receipt["errorCode"], receipt["error"], receipt["finishedAt"] = "failed", "action_failed", msg, d.nowLocked()
		d.appendEventLocked("action_failed", stepID, q["observationId"], receipt)
		d.terminateLocked("failed", "action_failed")
	}
	switch action {
	case protocol.ActClick, protocol.ActLongClick, protocol.ActInput:
		n := frame[*args.NodeID]
		if n == nil {
			fail("Action execution failed")
			return
		}
		if action == protocol.ActInput {
			d.inputs[n.ResID] = *args.Text
		} else if action == protocol.ActClick && n.OnClick != "" {
			d.screen = n.OnClick
		}
	case protocol.ActBack:
		if d.screen == "home" {
			d.screen = "login"
		}
	}
	o, settledSig, newFrame := d.newObservationLocked()
	d.setCurrentLocked(o, settledSig, newFrame)
	s.state = "active"
	receipt["status"], receipt["finishedAt"], receipt["settledObservation"] = "succeeded", d.nowLocked(), o
	d.appendEventLocked("action_settled", stepID, q["observationId"], receipt)
	if settledSig == preSig {
		s.noProgress++
	} else {
		s.noProgress = 0
	}
	if s.noProgress >= s.maxNoProgress {
		d.terminateLocked("failed", "no_progress_loop_detected")
	}
}

// ---- queries ----

func (d *Device) serveHTTP(w http.ResponseWriter, r *http.Request) {
	action, ok := strings.CutPrefix(r.URL.Path, protocol.HTTPPathPrefix)
	q := map[string]string{}
	vals, err := url.ParseQuery(r.URL.RawQuery)
	if err == nil {
		for k, v := range vals {
			q[k] = v[len(v)-1] // NanoHTTPD: the last duplicate wins
		}
	}
	d.mu.Lock()
	d.queries = append(d.queries, r.URL.RawQuery)
	d.mu.Unlock()
	if ok && action == protocol.ActionHarness && q["type"] == protocol.HarnessCapabilities {
		// Just enough of the harness for the host's session bootstrap.
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"success":true,"protocolVersion":"2.0","agentProtocolVersion":"1.0","packageName":"com.alipay.hulu"}`)
		return
	}
	if !ok || action != protocol.ActionAgent {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, `{"success": false, "error": "No Valid Listener"}`)
		return
	}
	b := d.query(q)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func e1(code, msg string) []byte {
	return encode(map[string]any{"success": false, "errorCode": code, "error": msg})
}

// encode renders an answer; callers hold d.mu when it references session
// state, so the act goroutine cannot change it mid-encoding.
func encode(m map[string]any) []byte {
	b, _ := json.Marshal(m)
	return b
}

func (d *Device) query(q map[string]string) []byte {
	typ := q["type"]
	if typ == "" {
		return e1(protocol.ErrMissingType, "Parameter 'type' is required")
	}
	switch typ {
	case protocol.AgentCapabilities:
		return encode(map[string]any{"success": true, "protocolVersion": "1.0",
			"queries":        []string{"capabilities", "start-status", "status", "observe", "receipt", "timeline"},
			"commands":       []string{"start", "act", "pause", "resume", "end", "cancel"},
			"actions":        []string{"click", "longClick", "input", "back", "home", "scroll", "wait"},
			"arbitraryShell": false, "mutationTransport": "adb-scheme", "queryTransport": "adb-forward-http"})
	case protocol.AgentStart, protocol.AgentAct, protocol.AgentPause, protocol.AgentResume, protocol.AgentEnd, protocol.AgentCancel:
		return e1(protocol.ErrAdbRequired, "Agent mutations require the DUMP-protected ADB scheme transport")
	case protocol.AgentStartStatus:
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.sess == nil || q["ownerToken"] != d.sess.token {
			return e1(protocol.ErrSessionNotFound, "No session belongs to ownerToken")
		}
		m := map[string]any{"success": true, "session": d.sess.snapshot(), "timelinePath": d.sess.timelinePath}
		if d.sess.obs != nil {
			m["observation"] = d.sess.obs
		}
		return encode(m)
	case protocol.AgentObserve:
		return d.observe(q)
	}
	for _, k := range []string{"sessionId", "ownerToken"} {
		if q[k] == "" {
			return e1(protocol.ErrMissingParameter, "Parameter '"+k+"' is required")
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if c, msg := d.identityLocked(q); c != "" {
		return e1(c, msg)
	}
	s := d.sess
	switch typ {
	case protocol.AgentStatus:
		if isLive(s.state) {
			s.lastActivity = d.nowLocked()
		}
		return encode(map[string]any{"success": true, "session": s.snapshot()})
	case protocol.AgentReceiptQuery:
		if q["stepId"] == "" {
			return e1(protocol.ErrMissingParameter, "Parameter 'stepId' is required")
		}
		rc, ok := s.receipts[q["stepId"]]
		if !ok {
			return e1(protocol.ErrReceiptNotFound, "No receipt exists for stepId")
		}
		return encode(map[string]any{"success": true, "receipt": rc, "session": s.snapshot()})
	case protocol.AgentTimeline:
		return encode(map[string]any{"success": true, "events": s.events, "timelinePath": s.timelinePath})
	}
	return e1(protocol.ErrUnsupportedType, "Unsupported Agent type: "+typ)
}

func (d *Device) observe(q map[string]string) []byte {
	for _, k := range []string{"sessionId", "ownerToken"} {
		if q[k] == "" {
			return e1(protocol.ErrMissingParameter, "Parameter '"+k+"' is required")
		}
	}
	d.mu.Lock()
	if c, msg := d.identityLocked(q); c != "" {
		d.mu.Unlock()
		return e1(c, msg)
	}
	s := d.sess
	switch {
	case !isLive(s.state):
		d.mu.Unlock()
		return e1(protocol.ErrTerminalSession, "The session is already terminal")
	case s.state == "acting":
		d.mu.Unlock()
		return e1(protocol.ErrSessionBusy, "An action is still executing")
	}
	d.mu.Unlock()
	if !d.waitRoot(nil) {
		return e1(protocol.ErrPageRootUnavailable, "Controllable foreground page root is unavailable")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sess != s || !isLive(s.state) {
		return e1(protocol.ErrTerminalSession, "The session is already terminal")
	}
	o, sig, frame := d.newObservationLocked()
	d.setCurrentLocked(o, sig, frame)
	d.appendEventLocked("observation_created", "", o["observationId"].(string), o)
	return encode(map[string]any{"success": true, "session": s.snapshot(), "observation": o})
}

// ---- plumbing ----
