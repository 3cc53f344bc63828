// Package perfstats analyses performance CSV files on the host (per-column
// statistics, FPS and jank figures) and renders SVG charts. It never talks
// to a device.
package perfstats
