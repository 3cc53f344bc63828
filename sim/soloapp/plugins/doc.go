// Package plugins is the simulated app's plugin resolver and plugin
// registry: list, import (alias install) and remove with their receipts, and
// the plugin archive checks (docs/device-protocol.md#plugins). It is separate
// because it only needs sim/soloapp/core and the performance resolver.
package plugins
