package action

import (
	"github.com/solopi-dev/solopi/fault"
	"strings"
)

// ParseOptions tune validation to the frozen contract and the task.
type ParseOptions struct {
	// XMax and YMax are the inclusive coordinate bounds of the frozen
	// contract (999 for relative_0_999, image or display size minus one for
	// pixel spaces). Zero means 999.
	XMax, YMax float64
	// Task is the user's instruction; an explicit swipe direction in it
	// binds every Swipe.
	Task string
}

// parsed is an accepted model answer.
type parsed struct {
	Action Action `json:"action"`
	// Call is the call text as the model wrote it.
	Call string `json:"call"`
	// Reasoning is the provider's reasoning field, the <think> block or the
	// prose before the call, whichever was present (never executed).
	Reasoning string `json:"reasoning,omitempty"`
}

// Parse accepts exactly one complete do(...) or finish(...) call and
// returns it validated against its closed schema, or a *ProtocolError.
// content is the assistant message; reasoning is the provider's separate
// reasoning field ("" if none).
func Parse(content, reasoning string, opts ParseOptions) (*parsed, error) {
	if opts.XMax <= 0 {
		opts.XMax = 999
	}
	if opts.YMax <= 0 {
		opts.YMax = 999
	}
	env, err := splitEnvelope(content)
	if err != nil {
		return nil, err
	}
	call, callText, prose, err := findCall(env)
	if err != nil {
		return nil, err
	}
	a, err := buildAction(call, opts)
	if err != nil {
		return nil, err
	}
	reasons := []string{strings.TrimSpace(reasoning), env.reasoning, prose}
	var kept []string
	for _, r := range reasons {
		if r != "" {
			kept = append(kept, r)
		}
	}
	return &parsed{Action: a, Call: callText, Reasoning: strings.Join(kept, "\n")}, nil
}

// envelope is the answer region after <think>/<answer> handling.
type envelope struct {
	answer    string
	offset    int  // offset of answer inside the content
	tagged    bool // the answer came from an explicit <answer> block
	reasoning string
}

// splitEnvelope separates reasoning from the answer: a leading <think>
// block (or everything before a bare </think>, for servers that strip the
// opening tag) is reasoning; an <answer> block, if present, is the answer.
// A missing </answer> is tolerated because several servers strip special
// tokens; anything after </answer> is trailing output.
func splitEnvelope(content string) (envelope, error) {
	if strings.TrimSpace(content) == "" {
		return envelope{}, perr(fault.CodeEmptyOutput, 0, "the model answered nothing")
	}
	var env envelope
	rest, off := content, 0
	trimmed := strings.TrimLeft(rest, " \t\r\n")
	if strings.HasPrefix(trimmed, "<think>") {
		start := len(rest) - len(trimmed) + len("<think>")
		end := strings.Index(rest[start:], "</think>")
		if end < 0 {
			return env, perr(fault.CodeMalformedEnvelope, start-len("<think>"), "the <think> block is never closed")
		}
		env.reasoning = strings.TrimSpace(rest[start : start+end])
		off = start + end + len("</think>")
		rest = content[off:]
	} else if i := strings.Index(rest, "</think>"); i >= 0 && !strings.Contains(rest[:i], "<think>") {
		env.reasoning = strings.TrimSpace(rest[:i])
		off = i + len("</think>")
		rest = content[off:]
	}
	if strings.Contains(rest, "<think>") || strings.Contains(rest, "</think>") {
		return env, perr(fault.CodeMalformedEnvelope, off, "only one leading <think> block is allowed")
	}
	if i := strings.Index(rest, "<answer>"); i >= 0 {
		pre := strings.TrimSpace(rest[:i])
		if pre != "" {
			// Prose before <answer> is reasoning that lost its tags.
			env.reasoning = strings.TrimSpace(env.reasoning + "\n" + pre)
		}
		aStart := i + len("<answer>")
		body := rest[aStart:]
		if j := strings.Index(body, "</answer>"); j >= 0 {
			after := body[j+len("</answer>"):]
			if strings.TrimSpace(after) != "" {
				return env, perr(fault.CodeTrailingOutput, off+aStart+j+len("</answer>"), "text follows </answer>")
			}
			body = body[:j]
		}
		if strings.Contains(body, "<answer>") {
			return env, perr(fault.CodeMultipleCalls, off+aStart, "more than one <answer> block")
		}
		env.answer, env.offset, env.tagged = body, off+aStart, true
		return env, nil
	}
	// A bare trailing </answer> is what is left when a server strips the
	// opening special token; it carries no content, so it is dropped.
	if j := strings.LastIndex(rest, "</answer>"); j >= 0 && strings.TrimSpace(rest[j+len("</answer>"):]) == "" {
		rest = rest[:j]
	}
	env.answer, env.offset = rest, off
	return env, nil
}

// findCall locates the call in the answer region. The call must start a
// line (after indentation); earlier prose is reasoning unless the answer
// came from an explicit <answer> block. Calls are found left to right with
// the real tokenizer, so text inside a string literal never starts a call.
func findCall(env envelope) (*callNode, string, string, error) {
	src := env.answer
	trimmed := strings.TrimSpace(src)
	if trimmed == "" {
		return nil, "", "", perr(fault.CodeMissingAction, env.offset, "the answer holds no call")
	}
	type found struct {
		node       *callNode
		start, end int // in src
	}
	var calls []found
	var firstErr error
	pos := 0
	for pos < len(src) {
		c := nextCallCandidate(src, pos)
		if c < 0 {
			break
		}
		p, err := newCallParser(src[c:], env.offset+c)
		if err == nil {
			var n *callNode
			n, err = p.parseCall()
			if err == nil {
				end := n.End - env.offset
				calls = append(calls, found{node: n, start: c, end: end})
				pos = end
				continue
			}
		}
		if firstErr == nil {
			firstErr = err
		}
		// A broken call is still a call: report it rather than guessing
		// that a later line is the real one.
		break
	}
	wrapErr := func(region string, base int) error {
		if i := strings.Index(region, "```"); i >= 0 {
			return perr(fault.CodeMarkdownWrapped, base+i, "the call is wrapped in a Markdown code fence")
		}
		if i := strings.Index(region, "<|"); i >= 0 {
			return perr(fault.CodeSpecialTokenWrapped, base+i, "the call is wrapped in provider special tokens")
		}
		return nil
	}
	if len(calls) == 0 {
		if err := wrapErr(src, env.offset); err != nil {
			return nil, "", "", err
		}
		if strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "[") || strings.HasPrefix(trimmed, `"`) {
			return nil, "", "", perr(fault.CodeJSONWrapped, env.offset+strings.Index(src, trimmed[:1]), "the action is wrapped in JSON; answer with the bare call")
		}
		if firstErr != nil {
			return nil, "", "", firstErr
		}
		if env.tagged && (strings.Contains(src, "do(") || strings.Contains(src, "finish(")) {
			return nil, "", "", perr(fault.CodeLeadingOutput, env.offset, "text precedes the call inside <answer>")
		}
		if strings.Contains(src, "do(") || strings.Contains(src, "finish(") {
			return nil, "", "", perr(fault.CodeMissingAction, env.offset, "the call must start its own line, not sit inside prose")
		}
		return nil, "", "", perr(fault.CodeMissingAction, env.offset, "the answer holds no do(...) or finish(...) call")
	}
	first, last := calls[0], calls[len(calls)-1]
	prose := src[:first.start]
	after := src[last.end:]
	if err := wrapErr(prose, env.offset); err != nil {
		return nil, "", "", err
	}
	if err := wrapErr(after, env.offset+last.end); err != nil {
		return nil, "", "", err
	}
	if firstErr != nil {
		return nil, "", "", firstErr
	}
	if len(calls) > 1 {
		return nil, "", "", perr(fault.CodeMultipleCalls, env.offset+calls[1].start, "%d calls; answer with exactly one", len(calls))
	}
	if rest := strings.TrimSpace(after); rest != "" {
		lx := lexer{src: rest}
		if t, err := lx.next(); err == nil && t.Kind == tokIdent && (t.Text == "do" || t.Text == "finish") {
			if t2, err := lx.next(); err == nil && t2.Kind == tokLParen {
				return nil, "", "", perr(fault.CodeMultipleCalls, env.offset+last.end+strings.Index(after, rest), "a second call follows the first")
			}
		}
		return nil, "", "", perr(fault.CodeTrailingOutput, env.offset+last.end+strings.Index(after, rest), "text follows the call")
	}
	if env.tagged && strings.TrimSpace(prose) != "" {
		return nil, "", "", perr(fault.CodeLeadingOutput, env.offset, "text precedes the call inside <answer>")
	}
	return first.node, src[first.start:first.end], strings.TrimSpace(prose), nil
}

// nextCallCandidate returns the offset of the next "do(" or "finish(" that
// starts a line (after indentation) at or after pos, or -1.
func nextCallCandidate(src string, pos int) int {
	for i := pos; i < len(src); {
		lineStart := i == 0 || src[i-1] == '\n'
		if lineStart {
			j := i
			for j < len(src) && (src[j] == ' ' || src[j] == '\t' || src[j] == '\r') {
				j++
			}
			for _, kw := range []string{"do", "finish"} {
				if strings.HasPrefix(src[j:], kw) {
					k := j + len(kw)
					for k < len(src) && (src[k] == ' ' || src[k] == '\t') {
						k++
					}
					if k < len(src) && src[k] == '(' {
						return j
					}
				}
			}
		}
		nl := strings.IndexByte(src[i:], '\n')
		if nl < 0 {
			return -1
		}
		i += nl + 1
	}
	return -1
}
