// Package agentloop is the strict pure-vision planner runtime ("PhoneAgent"):
// the model sees only the task, the current screenshot, the frozen coordinate
// contract with its geometry, its own earlier actions with sanitized results,
// notes and human answers. It never sees package names, activities, app
// lists, UI trees or window state.
//
// This package is the runtime core: the Device interface and the Screen it
// observes, zero-touch calibration and the endpoint preflight, the planner
// context and memory, the runtime loop (AgentState, AgentEvent), freshness
// and pixel verification, risk and completion reviews, recovery, the
// trajectory writer, the Planner for callers that own the device (one
// proposal per call: the verification engine's vision provider) and the
// isolated completion review on its own. Around it:
//
//   - action: the action protocol the model answers in (the parser, the
//     action vocabulary, the rejection codes, the swipe rules);
//   - coord: the coordinate contract and its exact mapping to device pixels;
//   - chat: the OpenAI-compatible model client (chatapi reads provider
//     answers);
//   - adbdevice and agentdevice: the two devices, plain adb input and the
//     SoloPi Agent session (points hit-tested to nodeIds on the host);
//   - fakemodel: a local model server that reads pixels, for tests and the
//     demo.
//
// The core knows no device: the device packages import it, never the
// reverse, and it imports none of the host's SoloPi packages.
package agentloop
