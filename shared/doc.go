// Package shared is herd's wire protocol: the WebSocket envelope, action and
// notification names, request and response payloads, error codes, session
// states and the task status summary. Both the server and the browser client
// (compiled for GOOS=js GOARCH=wasm) use these types, so the package imports
// only the standard library.
//
// The contract these types implement is documented for script authors in
// docs/protocol.md. Field comments say what an absent or zero value means.
//
// Protocol history (bump ProtocolVersion and add a line for every change a
// client could observe):
//
//   - 1 (2026-11-29): envelope, ping, boot, workspace and task actions,
//     workspace feed, agent profile list.
package shared

// ProtocolVersion is the version of the wire protocol this package implements.
const ProtocolVersion = 1
