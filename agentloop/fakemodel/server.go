// Package fakemodel is a local OpenAI-compatible chat-completions server
// that plays a vision model for tests and the demo. It decodes the PNG or
// JPEG it is sent and finds what it is asked for in the pixels: the
// calibration disc of a synthetic card, the simulator's controls by their
// distinct fill colours (tolerant of JPEG artefacts), and their labels by
// template matching against the simulator's font. It never replays fixed
// coordinates.
//
// Behaviours of real model families are selectable per server: answers in
// 0..999 or in image pixels, inconsistent spaces across requests (which
// calibration must reject), wrapped or trailing output, a premature
// finish(success=True), and a gullible completion reviewer that confirms
// every claim (the honest one reads the counter, counts the effective
// actions of a relative goal such as "increment the counter once", and
// answers UNCERTAIN about anything it cannot read). So are the wire behaviours of real providers
// (Provider): stream-only endpoints, content as an array of parts, Azure
// OpenAI's URL and api-key header, endpoints that refuse temperature or
// max_tokens, and text-only models that refuse images.
package fakemodel

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/internal/lazyregexp"
)

// Coordinate behaviours.
const (
	CoordsRelative     = "relative_0_999"
	CoordsImagePixels  = "image_pixels"
	CoordsInconsistent = "inconsistent"
)

// Output quirks.
const (
	quirkNone        = ""
	QuirkWrapped     = "wrapped"      // Markdown fence on first attempts, clean on PROTOCOL RETRY
	QuirkTrailing    = "trailing"     // chatter after the call on first attempts
	QuirkFalseFinish = "false_finish" // claims success on the first plan
	quirkThink       = "think"        // a <think> block before every answer
)

// Completion reviewers.
const (
	reviewHonest  = ""
	ReviewApprove = "approve"
)

// Prompt markers the server recognises (agentloop's prompt headers).
const (
	markPlanner     = "# Role: Android GUI planner"
	markCalibration = "# Role: coordinate calibration probe"
	markCompletion  = "# Role: isolated task completion reviewer"
	markRisk        = "# Role: isolated action risk reviewer"
	markPreflight   = "# Role: endpoint preflight"
	markRetry       = "PROTOCOL RETRY"
)

// targetColor is agentloop's calibration disc colour (magenta).
var targetColor = color.RGBA{0xff, 0x00, 0xff, 0xff}

// Options select the simulated model family.
type Options struct {
	Coords string
	Quirk  string
	// Provider is the wire behaviour (ProviderOpenAI when empty).
	Provider string
	// APIKey, when set, is required as "Bearer <key>" (as the api-key
	// header for ProviderAzure, which requires a non-empty one even
	// without APIKey).
	APIKey string
	// RiskVerdict answers risk reviews (ALLOW by default).
	RiskVerdict string
	// Review is the completion reviewer: honest (ReviewHonest, reads the
	// screenshot) or gullible (ReviewApprove, confirms every claim).
	Review string
	// Delay is added to every answer (for latency-sensitive tests).
	Delay time.Duration
	// PlanDelay is added to plan answers only: a run slow to plan whose
	// calibration and reviews are not (a stop clicked while it plans).
	PlanDelay time.Duration
}

// Request is one request the server received, for assertions. A refused
// request has Status ≠ 200, the Refused reason and no Kind.
type Request struct {
	Kind       string `json:"kind"`
	Retry      bool   `json:"retry"`
	Authorized bool   `json:"authorized"`
	Images     int    `json:"images"`
	// ImageFormat is the format of the last image (png or jpeg).
	ImageFormat string `json:"imageFormat,omitempty"`
	Stream      bool   `json:"stream"`
	Status      int    `json:"status"`
	Refused     string `json:"refused,omitempty"`
	Answer      string `json:"answer"`
}

// Server is a running fake model.
type Server struct {
	URL  string
	opts Options
	ln   net.Listener
	srv  *http.Server

	mu       sync.Mutex
	reqs     []Request
	calCount int
	plans    int
}

// Start listens on a loopback port and serves <URL>/chat/completions:
// URL ends in /v1, or for ProviderAzure in /openai/deployments/fake-vision.
func Start(opts Options) (*Server, error) {
	if opts.Provider == "" {
		opts.Provider = ProviderOpenAI
	}
	if !validProvider(opts.Provider) {
		return nil, fmt.Errorf("fakemodel: unknown provider %q (want one of %s)", opts.Provider, strings.Join(Providers(), ", "))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakemodel: listen: %w", err)
	}
	base := "/v1"
	if opts.Provider == ProviderAzure {
		base = "/openai/deployments/" + azureDeployment
	}
	s := &Server{opts: opts, ln: ln, URL: "http://" + ln.Addr().String() + base}
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}

// Provider is the server's wire behaviour.
func (s *Server) Provider() string { return s.opts.Provider }

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

func lastImage(msgs []msg) *image.RGBA {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].image != nil {
			return msgs[i].image
		}
	}
	return nil
}

func isRetry(msgs []msg) bool {
	n := len(msgs)
	return n > 0 && msgs[n-1].role == "user" && strings.Contains(msgs[n-1].text, markRetry)
}

// answer decides the request kind and its answer.
// kindOf is the request's kind, by the runtime's prompt markers.
func kindOf(msgs []msg) string {
	all := ""
	for _, m := range msgs {
		all += m.text + "\n"
	}
	for _, k := range []struct{ mark, kind string }{
		{markCalibration, "calibration"}, {markCompletion, "completion_review"}, {markRisk, "risk_review"},
		{markPreflight, "preflight"}, {markPlanner, "plan"},
	} {
		if strings.Contains(all, k.mark) {
			return k.kind
		}
	}
	return "unknown"
}

func (s *Server) answer(msgs []msg) (kind, answer, reasoning string) {
	img := lastImage(msgs)
	retry := isRetry(msgs)
	switch kind = kindOf(msgs); kind {
	case "calibration":
		return kind, s.quirk(s.calibrate(img), retry, false), ""
	case "completion_review":
		return kind, s.review(msgs, img), ""
	case "risk_review":
		v := s.opts.RiskVerdict
		if v == "" {
			v = "ALLOW"
		}
		return kind, fmt.Sprintf(`finish(success=True, message="%s: the fake reviewer sees no forbidden effect")`, v), ""
	case "preflight":
		if img == nil {
			return kind, "OK", ""
		}
		if _, _, ok := FindTarget(img, targetColor); ok {
			return kind, "A magenta disc on a light grey card.", ""
		}
		return kind, "A picture without a magenta disc.", ""
	case "plan":
		a, think := s.plan(msgs, img, retry)
		return kind, a, think
	}
	return kind, `finish(success=False, message="the fake model does not recognise this request")`, ""
}

// quirk applies the output quirk to first attempts.
func (s *Server) quirk(call string, retry, plan bool) string {
	if retry {
		return call
	}
	switch s.opts.Quirk {
	case QuirkWrapped:
		return "```python\n" + call + "\n```"
	case QuirkTrailing:
		return call + "\nI hope this helps!"
	}
	return call
}

// point renders an image-pixel point in the family's space. Inconsistent
// models switch space from one request to the next.
func (s *Server) point(x, y float64, w, h int, counter int) string {
	space := s.opts.Coords
	if space == CoordsInconsistent {
		if counter%2 == 0 {
			space = CoordsRelative
		} else {
			space = CoordsImagePixels
		}
	}
	if space == CoordsImagePixels {
		return fmt.Sprintf("[%d,%d]", int(math.Round(x)), int(math.Round(y)))
	}
	return fmt.Sprintf("[%d,%d]", int(math.Round(x/float64(w-1)*999)), int(math.Round(y/float64(h-1)*999)))
}

func (s *Server) calibrate(img *image.RGBA) string {
	if img == nil {
		return `finish(success=False, message="no image")`
	}
	x, y, ok := FindTarget(img, targetColor)
	if !ok {
		return `finish(success=False, message="no target disc in the image")`
	}
	s.mu.Lock()
	n := s.calCount
	s.calCount++
	s.mu.Unlock()
	return fmt.Sprintf(`do(action="Tap", element=%s)`, s.point(x, y, img.Rect.Dx(), img.Rect.Dy(), n))
}

var counterGoal = lazyregexp.New(`(?i)counter\D{0,40}?(\d+)`)

// relativeGoals ask for a number of increments ("increment the counter
// once", "将计数器增加一次") rather than a value.
var relativeGoals = []*lazyregexp.Regexp{
	lazyregexp.New(`(?i)(?:increment|increase|raise) the counter (once|twice|\d+ times)`),
	lazyregexp.New(`计数器.{0,4}?增加(一|两|二|三|\d+)次`),
}

var countWords = map[string]int{"once": 1, "twice": 2, "一": 1, "两": 2, "二": 2, "三": 3}

// relativeGoal is the number of increments a task asks for.
func relativeGoal(task string) (int, bool) {
	for _, re := range relativeGoals {
		m := re.FindStringSubmatch(task)
		if m == nil {
			continue
		}
		if n, ok := countWords[m[1]]; ok {
			return n, true
		}
		n, err := strconv.Atoi(strings.TrimSuffix(m[1], " times"))
		return n, err == nil
	}
	return 0, false
}

// seenCounter is the value the planner first described in its history
// ("The counter shows N"): where a relative goal started.
var seenCounter = lazyregexp.New(`The counter shows (\d+)`)

func firstSeenCounter(msgs []msg) (int, bool) {
	for _, m := range msgs {
		if m.role != "assistant" {
			continue
		}
		if sm := seenCounter.FindStringSubmatch(m.text); sm != nil {
			v, err := strconv.Atoi(sm[1])
			return v, err == nil
		}
	}
	return 0, false
}

// tapGoal is the other task the fake understands: tap the "X" button.
var tapGoal = lazyregexp.New(`(?i)tap (?:the )?"([^"]+)"`)

// commonLabels compete with the asked label so that a reading has to
// stand out from alternatives.
var commonLabels = []string{"OK", "Cancel", "Help", "Sign in", "Sign out", "+1", "Reset", "Next", "Back", "Send", "Pay"}

func findButton(img *image.RGBA, label string) (control, bool) {
	cands := []string{label}
	for _, c := range commonLabels {
		if c != label {
			cands = append(cands, c)
		}
	}
	for _, c := range FindControls(img, "button", cands) {
		if c.Label == label {
			return c, true
		}
	}
	return control{}, false
}

// readScreen finds the counter value, the buttons and any dialog.
type screenRead struct {
	counter  int
	hasValue bool
	buttons  map[string]control
	overlay  *control
}

func read(img *image.RGBA) screenRead {
	r := screenRead{buttons: map[string]control{}, counter: -1}
	for _, c := range FindControls(img, "overlay", []string{"OK", "Close", "Allow", "Cancel"}) {
		c := c
		if c.Label != "" {
			r.overlay = &c
		}
	}
	for _, c := range FindControls(img, "text", numberCandidates(100)) {
		if c.Label != "" {
			if v, err := strconv.Atoi(c.Label); err == nil {
				r.counter, r.hasValue = v, true
			}
		}
	}
	for _, c := range FindControls(img, "button", []string{"+1", "Reset", "OK", "Cancel"}) {
		if c.Label != "" {
			r.buttons[c.Label] = c
		}
	}
	return r
}

func taskOf(msgs []msg) string {
	for _, m := range msgs {
		if m.role == "user" && strings.HasPrefix(m.text, "Task: ") {
			line := strings.TrimPrefix(m.text, "Task: ")
			if i := strings.Index(line, "\n"); i >= 0 {
				line = line[:i]
			}
			return line
		}
	}
	return ""
}

// plan is the planner behaviour: read the counter, tap "+1" until it
// shows the goal, then finish.
func (s *Server) plan(msgs []msg, img *image.RGBA, retry bool) (string, string) {
	s.mu.Lock()
	s.plans++
	plans := s.plans
	s.mu.Unlock()
	think := ""
	if s.opts.Quirk == quirkThink {
		think = "I look at the screenshot and find the controls by their colour."
	}
	out := func(call string) (string, string) {
		if s.opts.Quirk == quirkThink {
			return "<think>" + think + "</think>" + call, ""
		}
		return s.quirk(call, retry, true), ""
	}
	if img == nil {
		return out(`finish(success=False, message="no screenshot")`)
	}
	task := taskOf(msgs)
	if tm := tapGoal.FindStringSubmatch(task); tm != nil {
		label := tm[1]
		if b, ok := findButton(img, label); ok {
			x, y := b.Center()
			return out(fmt.Sprintf(`do(action="Tap", element=%s, screen_description=%q, reason=%q)`, s.point(x, y, img.Rect.Dx(), img.Rect.Dy(), plans),
				"A blue button labelled "+label+" is visible.", "Tap the "+label+" button as the task asks; the screen should change."))
		}
		return out(fmt.Sprintf(`finish(success=True, message=%q)`, "The "+label+" button was tapped and is gone."))
	}
	sr := screens.read(img)
	var goal int
	if n, ok := relativeGoal(task); ok {
		start, seen := firstSeenCounter(msgs)
		if !seen {
			start = sr.counter
		}
		goal = start + n
	} else if m := counterGoal.FindStringSubmatch(task); m != nil {
		goal, _ = strconv.Atoi(m[1])
	} else {
		return out(`finish(success=False, message="the fake model only knows counter and tap-the-button tasks")`)
	}
	w, h := img.Rect.Dx(), img.Rect.Dy()
	tap := func(c control, desc, reason string) (string, string) {
		x, y := c.Center()
		return out(fmt.Sprintf(`do(action="Tap", element=%s, screen_description=%q, reason=%q)`, s.point(x, y, w, h, plans), desc, reason))
	}
	if sr.overlay != nil {
		return tap(*sr.overlay, "A red dialog covers the counter.", "Dismiss the dialog with its "+sr.overlay.Label+" button to get back to the counter.")
	}
	if !sr.hasValue {
		// Open the app from the launcher like a person would: find its
		// icon by its label; elsewhere go Home first.
		for _, c := range FindControls(img, "icon", []string{"Counter"}) {
			if c.Label == "Counter" {
				return tap(c, "The launcher shows app icons, among them Counter.", "Open the Counter app to work on the counter.")
			}
		}
		if plans%3 == 0 {
			return out(`do(action="Home", screen_description="No counter and no Counter icon are visible.", reason="Go to the launcher to open the Counter app.")`)
		}
		return out(`do(action="Wait", duration="1 seconds", screen_description="No counter is visible.", reason="Wait for the counter screen to appear.")`)
	}
	desc := fmt.Sprintf("The counter shows %d; a Reset and a +1 button are below it.", sr.counter)
	if s.opts.Quirk == QuirkFalseFinish && plans == 1 && sr.counter != goal {
		return out(fmt.Sprintf(`finish(success=True, message="The counter is at %d.")`, goal))
	}
	switch {
	case sr.counter == goal:
		return out(fmt.Sprintf(`finish(success=True, message="The counter shows %d.")`, goal))
	case sr.counter < goal:
		b, ok := sr.buttons["+1"]
		if !ok {
			return out(`finish(success=False, message="no +1 button is visible")`)
		}
		return tap(b, desc, fmt.Sprintf("Tap +1 to raise the counter from %d toward %d; the value should become %d.", sr.counter, goal, sr.counter+1))
	default:
		b, ok := sr.buttons["Reset"]
		if !ok {
			return out(`finish(success=False, message="the counter is above the goal and no Reset button is visible")`)
		}
		return tap(b, desc, fmt.Sprintf("The counter %d is above %d; tap Reset to start again from 0.", sr.counter, goal))
	}
}

// review is the completion reviewer. The honest one reads the counter
// itself; for a relative goal it counts the actions the runtime evidence
// shows changed the screen.
func (s *Server) review(msgs []msg, img *image.RGBA) string {
	if s.opts.Review == ReviewApprove {
		return `finish(success=True, message="The gullible fake reviewer confirms every claim.")`
	}
	var info struct {
		Task     string           `json:"task"`
		Evidence []map[string]any `json:"runtime_evidence"`
	}
	for _, m := range msgs {
		if m.role == "user" && json.Unmarshal([]byte(m.text), &info) == nil && info.Task != "" {
			break
		}
	}
	if n, ok := relativeGoal(info.Task); ok && img != nil {
		sr := screens.read(img)
		changed := 0
		for _, e := range info.Evidence {
			if e["type"] == "execution" && e["command_dispatched"] == true && e["observable_effect"] == "changed" {
				changed++
			}
		}
		switch {
		case !sr.hasValue:
			return `finish(success=False, message="No counter value is visible in the screenshot.")`
		case changed != n:
			return fmt.Sprintf(`finish(success=False, message="The evidence shows %d effective actions, not %d.")`, changed, n)
		}
		return fmt.Sprintf(`finish(success=True, message="The counter changed %d times and shows %d.")`, n, sr.counter)
	}
	if tm := tapGoal.FindStringSubmatch(info.Task); tm != nil && img != nil {
		if _, ok := findButton(img, tm[1]); ok {
			return fmt.Sprintf(`finish(success=False, message=%q)`, "The "+tm[1]+" button is still on the screen.")
		}
		return fmt.Sprintf(`finish(success=True, message=%q)`, "The screen moved past the "+tm[1]+" button.")
	}
	mm := counterGoal.FindStringSubmatch(info.Task)
	if img == nil || mm == nil {
		return `finish(success=False, message="UNCERTAIN: the fake reviewer cannot judge this from the screenshot")`
	}
	goal, _ := strconv.Atoi(mm[1])
	sr := screens.read(img)
	if sr.hasValue && sr.counter == goal {
		return fmt.Sprintf(`finish(success=True, message="The screenshot shows the counter at %d.")`, goal)
	}
	if !sr.hasValue {
		return `finish(success=False, message="No counter value is visible in the screenshot.")`
	}
	return fmt.Sprintf(`finish(success=False, message="The screenshot shows the counter at %d, not %d.")`, sr.counter, goal)
}
