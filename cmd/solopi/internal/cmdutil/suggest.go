package cmdutil

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// nearest is the candidate closest to typed by edit distance, when it is
// close enough to be what the user meant (at most a third of its letters
// changed, and at least one kept); "" when none is. A candidate typed
// abbreviates counts as one edit; a tie goes to the fewer real edits.
func nearest(typed string, candidates []string) string {
	best, bestDist, bestReal := "", -1, -1
	for _, c := range candidates {
		real := editDistance(typed, c)
		d := real
		if len(typed) >= 3 && strings.HasPrefix(c, typed) {
			d = min(d, 1)
		}
		if d > max(1, len(c)/3) || d >= len(c) {
			continue
		}
		if bestDist < 0 || d < bestDist || (d == bestDist && real < bestReal) {
			best, bestDist, bestReal = c, d, real
		}
	}
	return best
}

// editDistance is the Damerau-Levenshtein distance (adjacent swaps count
// one) between a and b, by bytes.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// flagSuggestion is the nearest flag of the command that failed to parse
// when the error is an unknown flag ("" otherwise), as --name.
func flagSuggestion(c *cli.Context, err error) string {
	const marker = "flag provided but not defined: "
	msg := err.Error()
	i := strings.Index(msg, marker)
	if i < 0 {
		return ""
	}
	typed := strings.TrimLeft(strings.TrimSpace(msg[i+len(marker):]), "-")
	flags := globalFlags()
	if c != nil && c.Command != nil {
		flags = append(flags, c.Command.Flags...)
	}
	var names []string
	for _, f := range flags {
		for _, n := range flagNames(f) {
			if len(n) > 1 {
				names = append(names, n)
			}
		}
	}
	names = append(names, "help")
	if s := nearest(typed, names); s != "" {
		return "--" + s
	}
	return ""
}
