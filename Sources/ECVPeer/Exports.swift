// The types an app meets through the peer API, re-exported so `import ECVPeer` is enough. Only
// values: the SDK's renderer protocol and media descriptions, never the layers beneath.
@_exported import protocol MediaPipeline.VideoRenderer
@_exported import enum MediaPipeline.RecordingLayout
@_exported import struct MediaPipeline.VideoFrame
@_exported import struct MediaPipeline.VideoInputs
@_exported import enum MediaPipeline.VideoSourceSpec
@_exported import enum MediaPipeline.AudioSourceSpec
@_exported import enum MediaPipeline.MediaKind
@_exported import enum MediaPipeline.RecordingFormat
@_exported import struct MediaPipeline.RecordingSummary
@_exported import struct MediaPipeline.PeerStats
@_exported import struct ECVProtocol.ICEServer
@_exported import enum ECVProtocol.PeerJSValue
@_exported import enum ECVProtocol.PeerJSSerialization
@_exported import enum ECVProtocol.ICETransportPolicy
