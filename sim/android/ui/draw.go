package ui

import (
	"image"
	"image/color"

	"github.com/solopi-dev/solopi/sim/screenstyle"
)

// FontScale is how many times the bitmap font is enlarged in screenshots.
const FontScale = screenstyle.FontScale

// The simulator's shared style per node kind, and the colours only the phone
// draws.
var (
	kindStyle = screenstyle.Kinds
	hintColor = screenstyle.RGB(0x9e, 0x9e, 0x9e)
	// FocusColor is the border of the focused text field.
	FocusColor = screenstyle.RGB(0xff, 0x98, 0x00)
)

func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) { screenstyle.Fill(img, r, c) }

// DrawNode paints n: its kind's fill and border (the focus colour for a
// focused field) and its label. full is the node's unclipped box, so that a
// half-scrolled row shows half of its label; n.Bounds is the visible part.
func DrawNode(img *image.RGBA, n *Node, full Rect) {
	st, ok := kindStyle[n.Kind]
	if !ok {
		st = kindStyle["container"]
	}
	clip := n.Bounds.Rectangle()
	r := full.Rectangle()
	if st.Fill.A != 0 {
		fill(img, clip, st.Fill)
	}
	border := st.Border
	if n.Focused {
		border = FocusColor
	}
	if border.A != 0 {
		const t = 4
		for _, edge := range []image.Rectangle{
			image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+t), image.Rect(r.Min.X, r.Max.Y-t, r.Max.X, r.Max.Y),
			image.Rect(r.Min.X, r.Min.Y, r.Min.X+t, r.Max.Y), image.Rect(r.Max.X-t, r.Min.Y, r.Max.X, r.Max.Y),
		} {
			fill(img, edge.Intersect(clip), border)
		}
	}
	label := n.Text
	if label == "" && (n.Kind == "image" || n.Kind == "icon") {
		label = n.Description
	}
	if label == "" {
		return
	}
	tc := st.Text
	if n.Editable && n.Hint != "" && label == n.Hint {
		tc = hintColor
	}
	DrawLabel(img, full, clip, label, tc, st.Center)
}

// DrawLabel draws text scaled by FontScale inside b (clipped to visible),
// vertically centred, left-aligned with padding or centred, truncated with
// ".." when it does not fit. Runes outside ASCII are drawn as '?' (the password bullet
// as '*').
func DrawLabel(img *image.RGBA, b Rect, visible image.Rectangle, text string, c color.RGBA, center bool) {
	gw, gh := screenstyle.GlyphSize()
	const pad = 16
	avail := (b.Width() - 2*pad) / gw
	if avail <= 0 {
		return
	}
	runes := []rune(text)
	if len(runes) > avail {
		if avail > 2 {
			runes = append(runes[:avail-2:avail-2], '.', '.')
		} else {
			runes = runes[:avail]
		}
	}
	x := b.Left + pad
	if center {
		x = b.Left + (b.Width()-len(runes)*gw)/2
	}
	y := b.Top + (b.Height()-gh)/2
	clip := visible.Intersect(img.Rect)
	for i, r := range runes {
		if r == '\u2022' {
			runes[i] = '*'
		}
	}
	screenstyle.DrawRunes(img, runes, x, y, clip, c)
}
