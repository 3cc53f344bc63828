//go:build !linux

package testwait

// memoryFS is false off Linux: the scratch directory stays the default.
func memoryFS(string, uint64) bool { return false }
