package coord

import "math"

// Spaces lists the accepted --coordinate-space values.
func Spaces() []string {
	return []string{string(SpaceAuto), string(SpaceRelative), string(SpaceImage), string(SpaceDisplay)}
}

// RuntimeToDevice maps a runtime 0..999 coordinate to a pixel on an axis of
// size pixels with the same rule as Map (used by handlers that only hold
// runtime coordinates, such as the calibration probe check).
func RuntimeToDevice(r float64, size int) int {
	return int(math.Floor(r*float64(size-1)/999 + 0.5))
}
