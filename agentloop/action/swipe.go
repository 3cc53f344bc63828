package action

import (
	"github.com/solopi-dev/solopi/fault"
	"math"
	"sort"
	"strings"
	"unicode"
)

// Swipe directions name the finger's movement on the screenshot: left means x
// decreases, right x increases, up y decreases, down y increases.
const (
	dirLeft  = "left"
	dirRight = "right"
	dirUp    = "up"
	dirDown  = "down"
)

// checkSwipe applies the swipe rules: the dominant axis decides the
// direction (a tie is ambiguous and rejected), the direction stated in
// reason must match it, and a direction the user asked for explicitly must
// match both. The user's right swipe is never silently replaced by a left
// one, even when the other direction looks better.
func checkSwipe(start, end Point, reason, task string, pos int) (string, error) {
	dx, dy := end[0]-start[0], end[1]-start[1]
	if dx == 0 && dy == 0 {
		return "", perr(fault.CodeSwipeAxisAmbiguous, pos, "start and end are the same point; a swipe must move")
	}
	var dir string
	switch {
	case math.Abs(dx) > math.Abs(dy):
		dir = map[bool]string{true: dirRight, false: dirLeft}[dx > 0]
	case math.Abs(dy) > math.Abs(dx):
		dir = map[bool]string{true: dirDown, false: dirUp}[dy > 0]
	default:
		return "", perr(fault.CodeSwipeAxisAmbiguous, pos, "the x and y movements are equal; one axis must dominate")
	}
	said := statedDirections(reason)
	if len(said) > 0 && !said[dir] {
		return "", perr(fault.CodeSwipeDirectionConflict, pos, "reason says the finger moves %s but start/end move it %s", joinDirs(said), dir)
	}
	asked := statedDirections(task)
	if len(asked) == 1 {
		var want string
		for d := range asked {
			want = d
		}
		if want != dir {
			return "", perr(fault.CodeSwipeDirectionConflict, pos, "the user asked for a %s swipe but start/end move the finger %s", want, dir)
		}
		if len(said) > 0 && !said[want] {
			return "", perr(fault.CodeSwipeDirectionConflict, pos, "the user asked for a %s swipe but reason says %s", want, joinDirs(said))
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
	{"从下往上", dirUp}, {"从下向上", dirUp}, {"从下到上", dirUp},
	{"从上往下", dirDown}, {"从上向下", dirDown}, {"从上到下", dirDown},
	{"从左往右", dirRight}, {"从左向右", dirRight}, {"从左到右", dirRight},
	{"从右往左", dirLeft}, {"从右向左", dirLeft}, {"从右到左", dirLeft},
	{"向左滑", dirLeft}, {"往左滑", dirLeft}, {"左滑", dirLeft}, {"左划", dirLeft},
	{"向右滑", dirRight}, {"往右滑", dirRight}, {"右滑", dirRight}, {"右划", dirRight},
	{"向上滑", dirUp}, {"往上滑", dirUp}, {"上滑", dirUp}, {"上划", dirUp}, {"上拉", dirUp},
	{"向下滑", dirDown}, {"往下滑", dirDown}, {"下滑", dirDown}, {"下划", dirDown}, {"下拉", dirDown},
}

var swipeVerbs = map[string]bool{
	"swipe": true, "swipes": true, "swiping": true, "swiped": true,
	"slide": true, "slides": true, "sliding": true,
	"drag": true, "drags": true, "dragging": true,
	"flick": true, "fling": true,
}

var dirWords = map[string]string{
	"left": dirLeft, "leftward": dirLeft, "leftwards": dirLeft,
	"right": dirRight, "rightward": dirRight, "rightwards": dirRight,
	"up": dirUp, "upward": dirUp, "upwards": dirUp,
	"down": dirDown, "downward": dirDown, "downwards": dirDown,
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
					out[dirUp] = true
				case "top>bottom":
					out[dirDown] = true
				case "left>right":
					out[dirRight] = true
				case "right>left":
					out[dirLeft] = true
				}
			}
		}
	}
	return out
}
