package action

import (
	"math"
	"sort"
	"strings"
	"unicode"
)

// Swipe directions name the finger's movement on the screenshot: left means x
// decreases, right x increases, up y decreases, down y increases.
const (
	DirLeft  = "left"
	DirRight = "right"
	DirUp    = "up"
	DirDown  = "down"
)

// checkSwipe applies the swipe rules: the dominant axis decides the
// direction (a tie is ambiguous and rejected), the direction stated in
// reason must match it, and a direction the user asked for explicitly must
// match both. The user's right swipe is never silently replaced by a left
// one, even when the other direction looks better.
func checkSwipe(start, end Point, reason, task string, pos int) (string, error) {
	dx, dy := end[0]-start[0], end[1]-start[1]
	if dx == 0 && dy == 0 {
		return "", perr(CodeSwipeAmbiguous, pos, "start and end are the same point; a swipe must move")
	}
	var dir string
	switch {
	case math.Abs(dx) > math.Abs(dy):
		dir = map[bool]string{true: DirRight, false: DirLeft}[dx > 0]
	case math.Abs(dy) > math.Abs(dx):
		dir = map[bool]string{true: DirDown, false: DirUp}[dy > 0]
	default:
		return "", perr(CodeSwipeAmbiguous, pos, "the x and y movements are equal; one axis must dominate")
	}
	said := statedDirections(reason)
	if len(said) > 0 && !said[dir] {
		return "", perr(CodeSwipeDirection, pos, "reason says the finger moves %s but start/end move it %s", joinDirs(said), dir)
	}
	asked := statedDirections(task)
	if len(asked) == 1 {
		var want string
		for d := range asked {
			want = d
		}
		if want != dir {
			return "", perr(CodeSwipeDirection, pos, "the user asked for a %s swipe but start/end move the finger %s", want, dir)
		}
		if len(said) > 0 && !said[want] {
			return "", perr(CodeSwipeDirection, pos, "the user asked for a %s swipe but reason says %s", want, joinDirs(said))
		}
	}
	return dir, nil
}

func joinDirs(m map[string]bool) string {
	var out []string
	for d := range m {
		out = append(out, d)
	}
	sort.Strings(out)
	return strings.Join(out, "/")
}

// cjkDirections are the Chinese finger-direction phrases; "从下往上" (from
// bottom to top) is how users work around models that reverse "上滑".
var cjkDirections = []struct{ phrase, dir string }{
	{"从下往上", DirUp}, {"从下向上", DirUp}, {"从下到上", DirUp},
	{"从上往下", DirDown}, {"从上向下", DirDown}, {"从上到下", DirDown},
	{"从左往右", DirRight}, {"从左向右", DirRight}, {"从左到右", DirRight},
	{"从右往左", DirLeft}, {"从右向左", DirLeft}, {"从右到左", DirLeft},
	{"向左滑", DirLeft}, {"往左滑", DirLeft}, {"左滑", DirLeft}, {"左划", DirLeft},
	{"向右滑", DirRight}, {"往右滑", DirRight}, {"右滑", DirRight}, {"右划", DirRight},
	{"向上滑", DirUp}, {"往上滑", DirUp}, {"上滑", DirUp}, {"上划", DirUp}, {"上拉", DirUp},
	{"向下滑", DirDown}, {"往下滑", DirDown}, {"下滑", DirDown}, {"下划", DirDown}, {"下拉", DirDown},
}

var swipeVerbs = map[string]bool{
	"swipe": true, "swipes": true, "swiping": true, "swiped": true,
	"slide": true, "slides": true, "sliding": true,
	"drag": true, "drags": true, "dragging": true,
	"flick": true, "fling": true,
}

var dirWords = map[string]string{
	"left": DirLeft, "leftward": DirLeft, "leftwards": DirLeft,
	"right": DirRight, "rightward": DirRight, "rightwards": DirRight,
	"up": DirUp, "upward": DirUp, "upwards": DirUp,
	"down": DirDown, "downward": DirDown, "downwards": DirDown,
}

// statedDirections finds the finger directions a text states: a swipe verb
// followed closely by a direction word ("swipe left", "swipe to the
// right", "swiping up"), "from bottom to top"-style phrases, and the
// Chinese phrases above. Scroll wording is ignored on purpose: "scroll
// down" names the content, not the finger, and means the opposite gesture.
func statedDirections(text string) map[string]bool {
	out := map[string]bool{}
	if text == "" {
		return out
	}
	for _, c := range cjkDirections {
		if strings.Contains(text, c.phrase) {
			out[c.dir] = true
		}
	}
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for i, w := range words {
		if swipeVerbs[w] {
			for j := i + 1; j < len(words) && j <= i+3; j++ {
				if d, ok := dirWords[words[j]]; ok {
					out[d] = true
					break
				}
				if swipeVerbs[words[j]] {
					break
				}
			}
		}
		// from bottom to top / from the left to the right.
		if w == "from" {
			var ends []string
			for j := i + 1; j < len(words) && j <= i+6 && len(ends) < 2; j++ {
				switch words[j] {
				case "top", "bottom", "left", "right":
					ends = append(ends, words[j])
				}
			}
			if len(ends) == 2 {
				switch ends[0] + ">" + ends[1] {
				case "bottom>top":
					out[DirUp] = true
				case "top>bottom":
					out[DirDown] = true
				case "left>right":
					out[DirRight] = true
				case "right>left":
					out[DirLeft] = true
				}
			}
		}
	}
	return out
}
