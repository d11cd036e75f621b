// EnQualify is a facade over the ECV call: its API names ECV's values (renderers, video sources,
// the underlying VideoCall), so an app that imports EnQualify sees them without a second import.
@_exported import ECV
// The session model is the back office's own body (docs/protocol.md §7.3), under the document's name.
@_exported import struct ECVProtocol.SessionModelVideoCall
