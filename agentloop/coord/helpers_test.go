package coord

import "math"

// spaces lists the accepted --coordinate-space values.
func spaces() []string {
	return []string{string(SpaceAuto), string(SpaceRelative), string(SpaceImage), string(SpaceDisplay)}
}

// runtimeToDevice maps a runtime 0..999 coordinate to a pixel on an axis of
// size pixels with the same rule as Map (used by handlers that only hold
// runtime coordinates, such as the calibration probe check).
func runtimeToDevice(r float64, size int) int {
	return int(math.Floor(r*float64(size-1)/999 + 0.5))
}
