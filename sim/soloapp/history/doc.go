// Package history is the simulated app's history resolver: replay and
// performance records on the device, their details and deletion receipts. It
// is separate because it only needs sim/soloapp/core, the performance
// resolver and the app's replay-live check.
package history
