package action

import (
	"errors"
	"github.com/solopi-dev/solopi/fault"
	"strings"
	"testing"
	"time"
)

func mustParse(t *testing.T, content string, opts ParseOptions) *parsed {
	t.Helper()
	p, err := Parse(content, "", opts)
	if err != nil {
		t.Fatalf("Parse(%q): %v", content, err)
	}
	return p
}

func TestParseAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		check    func(t *testing.T, p *parsed)
	}{
		{"tap", `do(action="Tap", element=[499, 182])`, func(t *testing.T, p *parsed) {
			if p.Action.Name != Tap || *p.Action.Element != (Point{499, 182}) {
				t.Errorf("%+v", p.Action)
			}
		}},
		{"E5 prose then call (README verbose)", "eBay is now open, need to tap the search box\ndo(action=\"Tap\", element=[499, 182])", func(t *testing.T, p *parsed) {
			if p.Reasoning != "eBay is now open, need to tap the search box" {
				t.Errorf("reasoning %q", p.Reasoning)
			}
		}},
		{"E2 think + answer without close tag", `<think>好的，标题输入框已经被激活了，我可以看到光标在"请输入标题"的位置。现在我需要输入标题"重新设计nas外壳"。</think><answer>do(action="Type", text="重新设计nas外壳")`, func(t *testing.T, p *parsed) {
			if p.Action.Name != Type || *p.Action.Text != "重新设计nas外壳" || !strings.HasPrefix(p.Reasoning, "好的") {
				t.Errorf("%+v / %q", p.Action, p.Reasoning)
			}
		}},
		{"E3 dangling </answer>", `do(action="Tap", element=[811,188])</answer>`, func(t *testing.T, p *parsed) {
			if *p.Action.Element != (Point{811, 188}) {
				t.Errorf("%+v", p.Action)
			}
		}},
		{"answer block on its own lines", "<answer>\ndo(action=\"Back\")</answer>\n", func(t *testing.T, p *parsed) {
			if p.Action.Name != Back {
				t.Errorf("%+v", p.Action)
			}
		}},
		{"reasoning that quotes a call inline", "I could use do(action=\"Back\") but the dialog has an X.\ndo(action=\"Tap\", element=[930,120])", func(t *testing.T, p *parsed) {
			if p.Action.Name != Tap {
				t.Errorf("%+v", p.Action)
			}
		}},
		{"multi-line Type with a raw newline", "do(action=\"Type\", text=\"第一行\n第二行\")", func(t *testing.T, p *parsed) {
			if *p.Action.Text != "第一行\n第二行" {
				t.Errorf("text %q", *p.Action.Text)
			}
		}},
		{"escapes", `do(action="Type", text="a\"b\\c\n\t\u00e9\x41'")`, func(t *testing.T, p *parsed) {
			if *p.Action.Text != "a\"b\\c\n\té"+"A'" {
				t.Errorf("text %q", *p.Action.Text)
			}
		}},
		{"single quotes and call text looks like a call", `do(action='Type', text='do(action="Back")')`, func(t *testing.T, p *parsed) {
			if *p.Action.Text != `do(action="Back")` {
				t.Errorf("text %q", *p.Action.Text)
			}
		}},
		{"aliases", `do(action="Type_Name", text="x")`, func(t *testing.T, p *parsed) {
			if p.Action.Name != Type {
				t.Errorf("%s", p.Action.Name)
			}
		}},
		{"double tap and long press", `do(action="Double Tap", element=[300,400])`, func(t *testing.T, p *parsed) {
			if p.Action.Name != DoubleTap {
				t.Errorf("%s", p.Action.Name)
			}
		}},
		{"LongPress alias", `do(action="LongPress", element=[300,400])`, func(t *testing.T, p *parsed) {
			if p.Action.Name != LongPress {
				t.Errorf("%s", p.Action.Name)
			}
		}},
		{"wait string", `do(action="Wait", duration="2 seconds")`, func(t *testing.T, p *parsed) {
			if p.Action.Duration != 2*time.Second {
				t.Errorf("%v", p.Action.Duration)
			}
		}},
		{"wait number and singular unit", `do(action="Wait", duration=1.5)`, func(t *testing.T, p *parsed) {
			if p.Action.Duration != 1500*time.Millisecond {
				t.Errorf("%v", p.Action.Duration)
			}
		}},
		{"wait 2 second", `do(action="Wait", duration="2 second")`, func(t *testing.T, p *parsed) {
			if p.Action.Duration != 2*time.Second {
				t.Errorf("%v", p.Action.Duration)
			}
		}},
		{"take over", `do(action="Take_over", message="请完成登录验证")`, func(t *testing.T, p *parsed) {
			if p.Action.Name != TakeOver || *p.Action.Message != "请完成登录验证" {
				t.Errorf("%+v", p.Action)
			}
		}},
		{"interact without message", `do(action="Interact")`, nil},
		{"note", `do(action="Note", message="True")`, nil},
		{"finish", `finish(success=True, message="")`, func(t *testing.T, p *parsed) {
			if !p.Action.IsFinish() || !*p.Action.Success || *p.Action.Message != "" {
				t.Errorf("%+v", p.Action)
			}
		}},
		{"metadata and trailing comma", `do(action="Back", screen_description="设置页", reason="返回上一页",)`, func(t *testing.T, p *parsed) {
			if p.Action.ScreenDescription != "设置页" || p.Action.Reason != "返回上一页" {
				t.Errorf("%+v", p.Action)
			}
		}},
		{"swipe up matching reason and task", `do(action="Swipe", start=[500,700], end=[500,300], reason="swipe up to see more")`, func(t *testing.T, p *parsed) {
			if p.Action.SwipeDirection != dirUp {
				t.Errorf("%s", p.Action.SwipeDirection)
			}
		}},
		{"float coordinates", `do(action="Tap", element=[499.5, 0])`, nil},
		{"reasoning field", `do(action="Home")`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := mustParse(t, tt.in, ParseOptions{Task: "swipe up through the list"})
			if tt.check != nil {
				tt.check(t, p)
			}
			// The canonical form parses back to the same action.
			again := mustParse(t, p.Action.Canonical(), ParseOptions{Task: "swipe up through the list"})
			if again.Action.Canonical() != p.Action.Canonical() {
				t.Errorf("canonical round trip: %s vs %s", again.Action.Canonical(), p.Action.Canonical())
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", maxMetadataRunes+1)
	tests := []struct{ name, in, code string }{
		{"empty", "  \n", fault.CodeEmptyOutput},
		{"E1 launch is gone", "用户要求打开微信。\ndo(action=\"Launch\", app=\"微信\")", fault.CodeUnknownAction},
		{"E3 answer launch", "<answer>\ndo(action=\"Launch\", app=\"美团\")</answer>", fault.CodeUnknownAction},
		{"E4 box tokens", "<|begin_of_box|>I can see the Android home screen...<|end_of_box|>\n<|begin_of_box|>do(action=\"Launch\", app=\"Settings\")<|end_of_box|>", fault.CodeSpecialTokenWrapped},
		{"E5 unescaped inner quotes", `All done. finish(message="Finished! Now There is a contact whose name is "Tom" in the list.")`, fault.CodeMissingAction},
		{"E5 on its own line", "finish(success=True, message=\"a \"Tom\" b\")", fault.CodeDynamicExpression},
		{"placeholder copied from the prompt", `do(action="Tap", element=[x,y])`, fault.CodeDynamicExpression},
		{"garbage 27", `[{'Type", text="库迪咖啡")`, fault.CodeJSONWrapped},
		{"garbage 316", `[{'Type': 'Type'}]`, fault.CodeJSONWrapped},
		{"sensitive message field", `do(action="Tap", element=[500,820], message="支付订单")`, fault.CodeUnknownField},
		{"call api", `do(action="Call_API", instruction="总结页面内容")`, fault.CodeUnknownAction},
		{"description field", `do(action="Tap", element=[1,2], description="the button")`, fault.CodeUnknownField},
		{"unknown field", `do(action="Back", force=True)`, fault.CodeUnknownField},
		{"unknown call", `tap(element=[1,2])`, fault.CodeMissingAction},
		{"unknown function at line start", `do(action="Fly")`, fault.CodeUnknownAction},
		{"duplicate keyword", `do(action="Tap", element=[1,2], element=[3,4])`, fault.CodeDuplicateKeyword},
		{"positional", `do("Tap", element=[1,2])`, fault.CodePositionalArgument},
		{"positional name", `do(Tap)`, fault.CodePositionalArgument},
		{"kwargs", `do(**{"action": "Back"})`, fault.CodeDynamicExpression},
		{"arithmetic", `do(action="Tap", element=[500+1, 2])`, fault.CodeDynamicExpression},
		{"call as value", `do(action="Tap", element=list((1,2)))`, fault.CodeDynamicExpression},
		{"attribute", `do(action=os.system, element=[1,2])`, fault.CodeDynamicExpression},
		{"f-string", `do(action=f"Tap", element=[1,2])`, fault.CodeDynamicExpression},
		{"concatenation", `do(action="Ta" "p", element=[1,2])`, fault.CodeDynamicExpression},
		{"two calls on two lines", "do(action=\"Back\")\ndo(action=\"Home\")", fault.CodeMultipleCalls},
		{"two calls on one line", `do(action="Back") do(action="Home")`, fault.CodeMultipleCalls},
		{"two answer blocks", "<answer>do(action=\"Back\")</answer><answer>do(action=\"Home\")</answer>", fault.CodeTrailingOutput},
		{"markdown fence", "```python\ndo(action=\"Back\")\n```", fault.CodeMarkdownWrapped},
		{"json object", `{"action": "Tap", "element": [1, 2]}`, fault.CodeJSONWrapped},
		{"json string", `"do(action=\"Back\")"`, fault.CodeJSONWrapped},
		{"trailing prose", "do(action=\"Back\")\nI hope this helps!", fault.CodeTrailingOutput},
		{"trailing after answer", "<answer>do(action=\"Back\")</answer> thanks", fault.CodeTrailingOutput},
		{"leading prose inside answer", "<answer>I will go back. do(action=\"Back\")</answer>", fault.CodeLeadingOutput},
		{"incomplete call", `do(action="Tap", element=[1,`, fault.CodeIncompleteCall},
		{"unterminated string", `do(action="Type", text="abc`, fault.CodeIncompleteCall},
		{"unterminated think", `<think>let me see`, fault.CodeMalformedEnvelope},
		{"degenerate repetition", "实际上，我应该点击弹窗外的区域。\n实际上，我应该点击弹窗外的区域。", fault.CodeMissingAction},
		{"nan coordinate", `do(action="Tap", element=[nan, 2])`, fault.CodeNonFiniteCoordinate},
		{"inf coordinate", `do(action="Tap", element=[1e999, 2])`, fault.CodeNonFiniteCoordinate},
		{"negative infinity", `do(action="Tap", element=[-inf, 2])`, fault.CodeNonFiniteCoordinate},
		{"out of range", `do(action="Tap", element=[1000, 2])`, fault.CodeCoordinateOutOfRange},
		{"negative", `do(action="Tap", element=[-1, 2])`, fault.CodeCoordinateOutOfRange},
		{"three numbers", `do(action="Tap", element=[1, 2, 3])`, fault.CodeInvalidValue},
		{"bool coordinate", `do(action="Tap", element=[True, 2])`, fault.CodeInvalidValue},
		{"point tags", `do(action="Tap", element=<point>250 126</point>)`, fault.CodeDynamicExpression},
		{"missing element", `do(action="Tap")`, fault.CodeMissingField},
		{"missing action", `do(element=[1,2])`, fault.CodeMissingField},
		{"finish without success", `finish(message="done")`, fault.CodeMissingField},
		{"success not bool", `finish(success="yes")`, fault.CodeInvalidValue},
		{"wait unbounded", `do(action="Wait", duration="60 seconds")`, fault.CodeInvalidWaitDuration},
		{"wait garbage", `do(action="Wait", duration="a while")`, fault.CodeInvalidWaitDuration},
		{"wait list", `do(action="Wait", duration=[2])`, fault.CodeInvalidWaitDuration},
		{"reason too long", `do(action="Back", reason="` + long + `")`, fault.CodeFieldTooLong},
		{"swipe reason says left, coordinates go up", `do(action="Swipe", start=[500,700], end=[500,300], reason="swipe left to the next tab")`, fault.CodeSwipeDirectionConflict},
		{"swipe diagonal tie", `do(action="Swipe", start=[100,100], end=[300,300])`, fault.CodeSwipeAxisAmbiguous},
		{"swipe zero length", `do(action="Swipe", start=[100,100], end=[100,100])`, fault.CodeSwipeAxisAmbiguous},
		{"nested lists too deep", `do(action="Tap", element=[[[[[1]]]]])`, fault.CodeDynamicExpression},
		{"hex number", `do(action="Tap", element=[0x10, 2])`, fault.CodeDynamicExpression},
		{"two thinks", "<think>a</think><think>b</think>do(action=\"Back\")", fault.CodeMalformedEnvelope},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(tt.in, "", ParseOptions{})
			var pe *ProtocolError
			if !errors.As(err, &pe) {
				t.Fatalf("accepted %q (err %v)", tt.in, err)
			}
			if pe.Code != tt.code {
				t.Errorf("code %s (%s), want %s", pe.Code, pe.Message, tt.code)
			}
		})
	}
}

// TestSwipeUserDirection: the user's explicit direction binds the swipe.
func TestSwipeUserDirection(t *testing.T) {
	t.Parallel()
	right := `do(action="Swipe", start=[200,500], end=[800,500], reason="swipe right to the previous photo")`
	left := `do(action="Swipe", start=[800,500], end=[200,500], reason="swipe left, it looks better")`
	for _, task := range []string{"向右滑动查看上一张照片", "swipe right to see the previous photo", "从左往右滑动"} {
		if _, err := Parse(right, "", ParseOptions{Task: task}); err != nil {
			t.Errorf("%q: right swipe rejected: %v", task, err)
		}
		_, err := Parse(left, "", ParseOptions{Task: task})
		var pe *ProtocolError
		if !errors.As(err, &pe) || pe.Code != fault.CodeSwipeDirectionConflict {
			t.Errorf("%q: a left swipe replaced the user's right swipe: %v", task, err)
		}
	}
	// 上滑 with the finger moving down is the classic reversal.
	_, err := Parse(`do(action="Swipe", start=[500,300], end=[500,700])`, "", ParseOptions{Task: "上滑查看更多"})
	if err == nil {
		t.Error("a down swipe passed for 上滑")
	}
	if _, err := Parse(`do(action="Swipe", start=[500,700], end=[500,300])`, "", ParseOptions{Task: "从下往上滑动"}); err != nil {
		t.Errorf("from bottom to top: %v", err)
	}
	// A reason that states the user's direction while the numbers disagree.
	_, err = Parse(`do(action="Swipe", start=[500,300], end=[500,700], reason="swipe up")`, "", ParseOptions{Task: "swipe up"})
	if err == nil {
		t.Error("reason and coordinates disagree but passed")
	}
	// Scroll wording names the content, not the finger, and is ignored.
	if got := statedDirections("scroll down to the bottom"); len(got) != 0 {
		t.Errorf("scroll wording read as %v", got)
	}
}

func TestParseReasoningField(t *testing.T) {
	t.Parallel()
	p, err := Parse(`do(action="Home")`, "the home key is safest", ParseOptions{})
	if err != nil || p.Reasoning != "the home key is safest" {
		t.Fatalf("%v %+v", err, p)
	}
}

// FuzzParseAction: the parser never panics, and whatever it accepts is
// a known action inside its bounds whose canonical form parses back to the
// same action.
func FuzzParseAction(f *testing.F) {
	for _, s := range []string{
		`do(action="Tap", element=[499, 182])`,
		"<think>x</think><answer>do(action=\"Type\", text=\"重新设计nas外壳\")",
		`finish(success=True, message="done")`,
		"```\ndo(action=\"Back\")\n```",
	} {
		f.Add(s, "")
	}
	f.Fuzz(func(t *testing.T, content, reasoning string) {
		p, err := Parse(content, reasoning, ParseOptions{Task: content})
		if err != nil {
			var pe *ProtocolError
			if !errors.As(err, &pe) || pe.Code == "" {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if _, ok := actionSchemas[p.Action.Name]; !ok {
			t.Fatalf("accepted unknown action %q", p.Action.Name)
		}
		for _, pt := range []*Point{p.Action.Element, p.Action.Start, p.Action.End} {
			if pt != nil && (pt[0] < 0 || pt[0] > 999 || pt[1] < 0 || pt[1] > 999) {
				t.Fatalf("accepted out-of-range %v", *pt)
			}
		}
		again, err := Parse(p.Action.Canonical(), "", ParseOptions{Task: content})
		if err != nil {
			t.Fatalf("canonical %q does not parse: %v", p.Action.Canonical(), err)
		}
		if again.Action.Canonical() != p.Action.Canonical() {
			t.Fatalf("round trip %q != %q", again.Action.Canonical(), p.Action.Canonical())
		}
	})
}
