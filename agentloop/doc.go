// Package agentloop is the strict pure-vision planner runtime ("PhoneAgent"):
// the model sees only the task, the current screenshot, the frozen coordinate
// contract with its geometry, its own earlier actions with sanitized results,
// notes and human answers. It never sees package names, activities, app
// lists, UI trees or window state.
//
// The pieces, one file each: the action protocol (a tokenizer and parser for
// the Python-call subset the model answers in), the coordinate contract and
// its mapper, zero-touch calibration, the OpenAI-compatible model client, the
// planner context and memory, the runtime loop (AgentState, AgentEvent),
// freshness, pixel verification, reviews, recovery, the trajectory writer,
// the two devices (the SoloPi Agent session and plain adb input), the
// Planner for callers that own the device (one proposal per call: the
// verification engine's vision provider) and the isolated completion
// review on its own.
package agentloop
