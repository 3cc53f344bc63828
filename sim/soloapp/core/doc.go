// Package core is the state every resolver of the simulated SoloPi app
// shares: the installation's configuration, the Phone it runs on, the app
// lock, SharedPreferences (the config keys), system permissions, fault knobs,
// the current process with its DeviceControlLease and per-feature slots, and
// the fastjson-style response envelope. It is a leaf package so the feature
// packages (agent, perf, media, plugins, history) and the app package that
// wires them (sim/soloapp) can all build on it without import cycles.
package core
