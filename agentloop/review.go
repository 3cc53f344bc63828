package agentloop

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"unicode"

	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/progress"
)

// Risk classes of a task, decided from the user's original instruction.
const (
	riskFinancial   = "financial_or_commercial"
	riskCredential  = "credential_or_account_security"
	riskDestructive = "destructive"
	riskOutbound    = "outbound_communication"
)

// riskKeywords map instruction words to classes. They only ever add
// caution: nothing the model writes can lower a task's class.
var riskKeywords = map[string][]string{
	riskFinancial:   {"pay", "payment", "purchase", "buy", "order", "checkout", "transfer", "refund", "subscribe", "支付", "付款", "购买", "下单", "转账", "充值", "订阅"},
	riskCredential:  {"password", "passcode", "login", "log in", "sign in", "verification code", "otp", "密码", "登录", "验证码", "账号"},
	riskDestructive: {"delete", "remove", "uninstall", "erase", "reset", "wipe", "删除", "卸载", "清空", "重置"},
	riskOutbound:    {"send", "post", "publish", "share", "reply", "call", "email", "发送", "发布", "分享", "回复", "拨打"},
}

// effectWords are the consequences a negative boundary can forbid, with
// the words that name them in an action's reason or text.
var effectWords = map[string][]string{
	"send":     {"send", "sending", "sent", "发送", "发出"},
	"pay":      {"pay", "paying", "payment", "checkout", "支付", "付款"},
	"buy":      {"buy", "buying", "purchase", "order", "购买", "下单"},
	"delete":   {"delete", "deleting", "remove", "删除"},
	"post":     {"post", "posting", "publish", "发布"},
	"submit":   {"submit", "submitting", "提交"},
	"call":     {"call", "calling", "dial", "拨打"},
	"share":    {"share", "sharing", "分享"},
	"install":  {"install", "installing", "安装"},
	"login":    {"log in", "login", "sign in", "登录"},
	"transfer": {"transfer", "转账"},
}

// taskRisk is the classification of one instruction.
type taskRisk struct {
	Classes   []string `json:"classes"`
	Forbidden []string `json:"forbidden_effects"`
}

// High reports whether coordinate actions of the task need a risk review.
func (r taskRisk) High() bool { return len(r.Classes) > 0 || len(r.Forbidden) > 0 }

func containsWord(text, w string) bool {
	lt := strings.ToLower(text)
	if w == "" {
		return false
	}
	// CJK keywords have no word boundaries.
	for _, r := range w {
		if r > unicode.MaxASCII {
			return strings.Contains(lt, w)
		}
	}
	for i := 0; ; {
		j := strings.Index(lt[i:], w)
		if j < 0 {
			return false
		}
		s, e := i+j, i+j+len(w)
		okL := s == 0 || !isWordByte(lt[s-1])
		okR := e == len(lt) || !isWordByte(lt[e])
		if okL && okR {
			return true
		}
		i = s + 1
	}
}

func isWordByte(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' }

// classifyTask reads the risk classes and the explicit negative boundaries
// ("do not send", "don't pay", "不要发送", "禁止删除") of an instruction.
func classifyTask(goal string) taskRisk {
	var r taskRisk
	for _, class := range []string{riskFinancial, riskCredential, riskDestructive, riskOutbound} {
		for _, w := range riskKeywords[class] {
			if containsWord(goal, w) {
				r.Classes = append(r.Classes, class)
				break
			}
		}
	}
	lower := strings.ToLower(goal)
	negs := []string{"do not ", "don't ", "dont ", "never ", "without ", "must not ", "不要", "禁止", "不能", "不可"}
	seen := map[string]bool{}
	for _, n := range negs {
		for i := 0; ; {
			j := strings.Index(lower[i:], n)
			if j < 0 {
				break
			}
			after := lower[i+j+len(n):]
			window := after
			if len(window) > 40 {
				window = window[:40]
			}
			for effect, words := range effectWords {
				for _, w := range words {
					if strings.HasPrefix(strings.TrimLeft(window, " "), w) {
						seen[effect] = true
					}
				}
			}
			i += j + len(n)
		}
	}
	r.Forbidden = sortedKeys(seen)
	return r
}

// actionSensitive reports an action whose own text or reason names a
// high-consequence effect (pay, send, delete, password, …). The model's
// words may only add a review, never remove one.
func actionSensitive(a action.Action) bool {
	text := a.Reason
	if a.Text != nil {
		text += " " + *a.Text
	}
	if text == "" {
		return false
	}
	for _, words := range riskKeywords {
		for _, w := range words {
			if containsWord(text, w) {
				return true
			}
		}
	}
	return false
}

// boundaryConflict reports the forbidden effect an action's reason or text
// explicitly names, if any. Only the model's own statement of intent is
// used, and only to block: it can never unlock anything.
func boundaryConflict(r taskRisk, a action.Action) string {
	text := a.Reason
	if a.Text != nil {
		text += " " + *a.Text
	}
	for _, eff := range r.Forbidden {
		for _, w := range effectWords[eff] {
			if containsWord(text, w) {
				return eff
			}
		}
	}
	return ""
}

// Risk review verdicts.
const (
	riskAllow   = "ALLOW"
	riskConfirm = "CONFIRM"
	riskBlock   = "BLOCK"
)

// parseRiskVerdict reads the reviewer's finish(message="VERDICT: …").
// Anything else is inconclusive, which asks a human.
func parseRiskVerdict(resp *chat.Response) (string, string) {
	p, err := action.Parse(resp.Content, resp.Reasoning, action.ParseOptions{})
	if err != nil || !p.Action.IsFinish() || p.Action.Message == nil {
		return riskConfirm, "the risk reviewer gave no usable verdict"
	}
	msg := strings.TrimSpace(*p.Action.Message)
	for _, v := range []string{riskAllow, riskConfirm, riskBlock} {
		if strings.HasPrefix(strings.ToUpper(msg), v) {
			return v, msg
		}
	}
	return riskConfirm, msg
}

// Confirmer asks a human. Confirm approves or refuses one action; TakeOver
// hands the phone to the human and returns when they are done (false:
// they gave up).
type Confirmer interface {
	Confirm(ctx context.Context, question string) (bool, error)
	TakeOver(ctx context.Context, message string) (bool, error)
}

// TerminalConfirmer prompts on a terminal: the question on Out, the answer
// read from In. Use it only when both are a TTY; otherwise leave the
// confirmer nil and the runtime ends with a blocked outcome.
type TerminalConfirmer struct {
	In  io.Reader
	Out io.Writer

	once  sync.Once
	lines chan termLine
}

type termLine struct {
	s   string
	err error
}

// readLine waits for the next line of In. One goroutine reads In for the
// confirmer's whole life and hands lines over: a prompt abandoned because
// its context ended (Ctrl-C, or another confirmer answered first) leaves
// no reader behind that could race the next prompt for the same bytes.
// Reading a terminal cannot be interrupted portably, so that goroutine
// ends only with In.
func (t *TerminalConfirmer) readLine(ctx context.Context) (string, error) {
	t.once.Do(func() {
		t.lines = make(chan termLine)
		go func() {
			rd := bufio.NewReader(t.In)
			for {
				s, err := rd.ReadString('\n')
				t.lines <- termLine{s, err}
				if err != nil {
					close(t.lines)
					return
				}
			}
		}()
	})
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case r, ok := <-t.lines:
		if !ok {
			return "", fmt.Errorf("read the answer: %w", io.EOF)
		}
		if r.err != nil && r.s == "" {
			return "", fmt.Errorf("read the answer: %w", r.err)
		}
		return strings.TrimSpace(r.s), nil
	}
}

// Confirm asks a yes/no question.
func (t *TerminalConfirmer) Confirm(ctx context.Context, question string) (bool, error) {
	fmt.Fprintf(t.Out, "\n[solopi agent] confirmation needed: %s\nProceed? [y/N] ", progress.Printable(question))
	s, err := t.readLine(ctx)
	if err != nil {
		return false, err
	}
	s = strings.ToLower(s)
	return s == "y" || s == "yes", nil
}

// TakeOver waits until the human pressed Enter (or typed "abort").
func (t *TerminalConfirmer) TakeOver(ctx context.Context, message string) (bool, error) {
	fmt.Fprintf(t.Out, "\n[solopi agent] please take over the phone: %s\nPress Enter when done, or type abort: ", progress.Printable(message))
	s, err := t.readLine(ctx)
	if err != nil {
		return false, err
	}
	return strings.ToLower(s) != "abort", nil
}

// askHuman hands over to a human, or ends blocked when nobody can answer.
func (r *taskRun) askHuman(ctx, parent context.Context, msg string, act action.Action) {
	st := r.st
	st.setPhase(phaseConfirming, "ask a human to take over")
	c := r.a.cfg.Confirmer
	if c == nil {
		st.emit(EvConfirmation, "takeover required but no human is available", map[string]any{"kind": act.Name, "message": msg, "interactive": false})
		r.finish(OutcomeBlocked, "human takeover required: "+msg, nil)
		return
	}
	ok, err := c.TakeOver(ctx, msg)
	if err != nil {
		if r.interrupted(parent, err) {
			return
		}
		r.finish(OutcomeBlocked, "the takeover prompt failed", err)
		return
	}
	st.emit(EvConfirmation, "human takeover finished", map[string]any{"kind": act.Name, "completed": ok, "interactive": true})
	if !ok {
		r.finish(OutcomeBlocked, "the human ended the task during takeover", nil)
		return
	}
	r.mem.addTurn(st.Step(), act, map[string]any{"command_dispatched": false, "human_takeover": "completed"})
	r.repeatSig, r.repeatCount = "", 0
	st.setPhase(phaseObserving, "takeover finished")
}

// handleFinish ends the task or, for a success claim, runs the isolated
// completion review on a fresh screenshot.
func (r *taskRun) handleFinish(ctx, parent context.Context, step int, act action.Action) {
	st := r.st
	msg := ""
	if act.Message != nil {
		msg = *act.Message
	}
	if act.Success == nil || !*act.Success {
		r.finish(outcomeNotCompleted, "the model reported the task cannot be completed: "+msg, nil)
		return
	}
	st.setPhase(phaseCompletionCheck, "isolated completion review")
	observe := r.a.dev.Observe
	if r.freshScreen != nil {
		observe = r.freshScreen
	}
	fresh, err := observe(ctx)
	if err != nil {
		if r.interrupted(parent, err) {
			return
		}
		r.hardFailure(failObservation, "", err)
		return
	}
	verdict, why, err := reviewCompletion(ctx, st, r.a.model, r.a.cfg.Policy, r.goal, compactEvidence(st.Events(), 20), fresh)
	if err != nil {
		if r.interrupted(parent, err) {
			return
		}
		r.hardFailure(failModel, "", err)
		return
	}
	ok := verdict == CompletionConfirmed
	st.emit(EvTaskReview, "completion "+verdict, map[string]any{
		"status": reviewStatus[verdict], "verdict": verdict, "message": why, "screenshot_sha256": fresh.SHA256,
		"planner_message": msg,
	})
	if ok {
		r.finish(OutcomeCompleted, msg, nil)
		return
	}
	if verdict == CompletionUncertain && r.blockUncertain {
		r.finish(OutcomeBlocked, "the completion review cannot tell from the screenshot whether the task is complete: "+why, nil)
		return
	}
	n := st.soft(softCompletion)
	r.mem.addTurn(step, act, map[string]any{"command_dispatched": false, "completion_review": "rejected", "review_message": why,
		"note": "an independent review of a fresh screenshot does not confirm the task is complete"})
	if n >= r.a.cfg.SoftBudget {
		r.finish(outcomeNotCompleted, "the completion claim was rejected by review "+fmt.Sprint(n)+" times: "+why, nil)
		return
	}
	st.emit(EvRecovery, "recovery: replan after a rejected completion claim", map[string]any{"outcome": string(recoverReplan), "class": softCompletion, "count": n})
	r.pending = fresh
	st.setPhase(phaseObserving, "replan after the completion review")
}

// Verdicts of the isolated completion review.
const (
	CompletionConfirmed = "confirmed"
	CompletionRejected  = "rejected"
	// CompletionUncertain: the screenshot cannot show whether the task is
	// complete, or the reviewer gave no usable answer.
	CompletionUncertain = "uncertain"
)

// reviewStatus is a completion verdict as a verification status.
var reviewStatus = map[string]string{CompletionConfirmed: VerifyPassed, CompletionRejected: VerifyFailed, CompletionUncertain: verifyInconclusive}

// uncertainMarker starts the message of a reviewer that cannot tell.
const uncertainMarker = "UNCERTAIN"

// reviewCompletion asks the isolated reviewer whether screen shows goal
// achieved. It sees the goal, the compact runtime evidence and the
// screenshot; the planner's own words (its message, screen_description
// and reason) never reach it: a claim must not talk the review into a
// verdict.
func reviewCompletion(ctx context.Context, st *agentState, m chat.Model, pol coord.ResizePolicy, goal string, evidence []map[string]any, screen *Screen) (string, string, error) {
	img, err := screen.ModelImage(pol, chat.ImageEncodingOf(m))
	if err != nil {
		return "", "", err
	}
	if evidence == nil {
		evidence = []map[string]any{}
	}
	info := map[string]any{"task": goal, "runtime_evidence": evidence}
	req := chat.Request{Purpose: "completion_review", Messages: []chat.Message{
		{Role: "system", Text: completionPrompt()},
		{Role: "user", Text: mustJSON(info), Image: img},
	}}
	resp, err := st.chat(ctx, m, req)
	if err != nil {
		return "", "", err
	}
	p, perrv := action.Parse(resp.Content, resp.Reasoning, action.ParseOptions{})
	if perrv != nil || !p.Action.IsFinish() {
		return CompletionUncertain, "the reviewer gave no usable verdict", nil
	}
	why := ""
	if p.Action.Message != nil {
		why = strings.TrimSpace(*p.Action.Message)
	}
	switch {
	case *p.Action.Success:
		return CompletionConfirmed, why, nil
	case len(why) >= len(uncertainMarker) && strings.EqualFold(why[:len(uncertainMarker)], uncertainMarker):
		return CompletionUncertain, strings.TrimLeft(why[len(uncertainMarker):], ": "), nil
	}
	return CompletionRejected, why, nil
}

// riskReview asks the isolated risk reviewer about one action.
func (r *taskRun) riskReview(ctx context.Context, act action.Action, cmd Command, img *chat.Image) (string, string, error) {
	target := map[string]any{"action": act.Name}
	if cmd.Point != nil {
		target["target_canonical"] = []float64{round3(cmd.Point.Canonical[0]), round3(cmd.Point.Canonical[1])}
	}
	if act.Text != nil {
		target["text"] = *act.Text
	}
	// The planner's reason is deliberately left out: it may add caution
	// (boundaryConflict, actionSensitive) but never argue for approval.
	info := map[string]any{"task": r.goal, "proposed_action": target,
		"note": "target_canonical is the target as fractions of the image width and height from the top-left corner"}
	req := chat.Request{Purpose: "risk_review", Messages: []chat.Message{
		{Role: "system", Text: riskPrompt()},
		{Role: "user", Text: mustJSON(info), Image: img},
	}}
	resp, err := r.st.chat(ctx, r.a.model, req)
	if err != nil {
		return "", "", err
	}
	v, why := parseRiskVerdict(resp)
	return v, why, nil
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }
