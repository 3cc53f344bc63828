package core

// rectValue is android.graphics.Rect as fastjson writes it.
func rectValue(r Rect) Obj {
	return NewObj("bottom", r.Bottom, "empty", r.javaEmpty(), "left", r.Left, "right", r.Right, "top", r.Top)
}
