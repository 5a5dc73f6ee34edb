// Package toolcontent turns a tool call's content, as an agent reports it
// (agent.ToolContent), into what herd keeps and sends: each part's body —
// a text part's text, or a diff's old and new text as a unified diff,
// computed here once by a search whose cost is bounded (see Unified) so
// no client ever diffs — kept up to shared.ToolStoredBytes per call, and
// its wire form, the body's first bytes within a per-part bound with the
// whole body's size and line count. The rest is read in pages
// (message.tool_content.get).
package toolcontent
