// Package media is the simulated app's screen-record and video-analysis
// resolvers, with the MP4 files they write and read
// (docs/device-protocol.md#session-types). Video analysis needs the analyzer
// plugin, which it looks up in sim/soloapp/plugins.
package media
