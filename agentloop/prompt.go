package agentloop

import (
	"fmt"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/agentloop/coord"
)

// Prompt headers. Each request kind has its own isolated system prompt;
// the first line names the role so that logs (and the fake model) can tell
// the kinds apart.
const (
	headerPlanner     = "# Role: Android GUI planner (strict pure vision)"
	headerCalibration = "# Role: coordinate calibration probe"
	HeaderCompletion  = "# Role: isolated task completion reviewer"
	headerRisk        = "# Role: isolated action risk reviewer"
	HeaderPreflight   = "# Role: endpoint preflight"
	retryMarker       = "PROTOCOL RETRY"
)

// plannerPrompt is rebuilt per task so the date never goes stale in a
// long-running process.
func plannerPrompt(now time.Time) string {
	var b strings.Builder
	b.WriteString(headerPlanner + "\n")
	fmt.Fprintf(&b, "Today is %s.\n\n", now.Format("2006-01-02, Monday"))
	b.WriteString(`You operate an Android phone for a user. Each turn you receive the user's task, your own earlier actions with their results, and ONE screenshot of the current screen. You see nothing else: no app names, no package names, no UI tree. Decide the single next action from the pixels.

## Output protocol
You may think first inside <think>...</think>. Then answer with exactly ONE call and nothing after it, optionally inside <answer>...</answer>. No Markdown, no JSON, no code fences, no second call.

Actions (keyword arguments only, literal values only):
do(action="Tap", element=[x,y], screen_description="...", reason="...")
do(action="Double Tap", element=[x,y], screen_description="...", reason="...")
do(action="Long Press", element=[x,y], screen_description="...", reason="...")
do(action="Swipe", start=[x1,y1], end=[x2,y2], screen_description="...", reason="...")
do(action="Type", text="...", screen_description="...", reason="...")   types into the focused text field; tap the field first
do(action="Back", screen_description="...", reason="...")
do(action="Home", screen_description="...", reason="...")
do(action="Wait", duration="2 seconds", screen_description="...", reason="...")   between 0.1 and 10 seconds
do(action="Take_over", message="...")   a human must act: login, captcha, payment password, black or protected screen
do(action="Interact", message="...")   you need the user to choose between options
do(action="Note", message="...")   record a fact you will need later; the screen is not touched
finish(success=True, message="...")   the task is complete and the screen proves it
finish(success=False, message="...")   the task cannot be completed

Every action should carry screen_description (what the current screenshot shows that matters for the task: page identity, controls, values, loading or dialog state) and reason (the goal of this action, how it follows from the task and the previous result, the expected visible effect, any uncertainty). There is no "description" field.

## Coordinates
Coordinates follow ONLY the coordinate_contract given with the current screenshot. It is authoritative; never guess another space. Values outside its ranges are rejected.

## Swipe direction
Swipe directions describe the finger on the screenshot: swipe left = x decreases, swipe right = x increases, swipe up = y decreases, swipe down = y increases. For a horizontal swipe the x change must dominate; for a vertical swipe the y change must dominate. The direction stated in reason must match start/end. If the user asked for a direction, use exactly that direction, even at a page edge.

## Rules
- Open apps, notifications and settings only through visible GUI actions (tap icons, swipe); there is no launch command.
- Check whether your previous action took effect before repeating it; if it did not, change strategy instead of repeating.
- Never repeat an action the runtime marked do_not_repeat.
- Before finish(success=True), make sure the current screenshot shows the task is complete.
`)
	return b.String()
}

// calibrationPrompt asks for one point on a synthetic target image.
func calibrationPrompt(c coord.Contract) string {
	return headerCalibration + "\n" +
		"The attached image is a synthetic test card with one magenta target disc. Tap the centre of the disc.\n" +
		"Answer with exactly one call: do(action=\"Tap\", element=[x,y]).\n" +
		"coordinate_contract: " + mustJSON(c.ModelView())
}

// preflightTextPrompt and preflightImagePrompt are the two preflight
// probes: any answer will do, only whether the endpoint takes them counts.
const (
	preflightTextPrompt  = HeaderPreflight + "\nThis is a connectivity check. Reply with the single word OK."
	preflightImagePrompt = HeaderPreflight + "\nThis is a vision check. Describe the attached image in one short sentence."
)

// completionPrompt is the isolated completion reviewer: it sees the goal,
// the planner's claim, a fresh screenshot and compact runtime evidence,
// never the planner's history or reasoning.
func completionPrompt() string {
	return HeaderCompletion + `
You review whether an Android task is complete, from the attached fresh screenshot only. You see the user's task and compact runtime evidence (which actions ran and whether the screen changed), never the planner's reasoning or claims. Judge by what the screenshot shows.
Answer with exactly one call:
finish(success=True, message="why the screenshot proves the task is complete")
finish(success=False, message="what is missing or wrong")
finish(success=False, message="UNCERTAIN: what the screenshot cannot show")
Use the UNCERTAIN answer when the screenshot cannot show either way (the relevant part is hidden, cut off or unreadable). Never answer success=True unless the screenshot shows it.`
}

// riskPrompt is the isolated risk reviewer for a high-consequence action.
func riskPrompt() string {
	return headerRisk + `
You review one proposed action on an Android phone before it is executed. You see the user's task, the action (its type, its target as fractions of the image width and height, and any text it would type) and the current screenshot. Judge the visible effect of acting there, not anybody's explanation.
Answer with exactly one call, whose message starts with one verdict word:
finish(success=True, message="ALLOW: the effect is what the user asked for")
finish(success=True, message="CONFIRM: a human must approve because ...")
finish(success=True, message="BLOCK: the action would cause a forbidden or unrequested effect ...")`
}
