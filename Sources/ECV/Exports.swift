// The types an app meets through the SDK's API, re-exported so `import ECV` is enough.
@_exported import struct MediaPipeline.MediaParameters
@_exported import struct MediaPipeline.DataChannelConfig
@_exported import enum MediaPipeline.VideoSourceSpec
@_exported import enum MediaPipeline.AudioSourceSpec
@_exported import struct MediaPipeline.VideoInputs
@_exported import enum MediaPipeline.ReceiveSinkSpec
@_exported import enum MediaPipeline.MediaKind
@_exported import struct MediaPipeline.VideoFrame
@_exported import struct MediaPipeline.VideoInfo
@_exported import protocol MediaPipeline.VideoRenderer
@_exported import struct ECVProtocol.ICEServer
@_exported import struct MediaPipeline.PeerStats
@_exported import struct MediaPipeline.LossRecovery
@_exported import struct MediaPipeline.BandwidthEstimator
@_exported import enum ECVProtocol.ICETransportPolicy
// What some events carry as `objData`: the join answer (`JoinedRoom`) and the offer or answer
// (`GotOffer`, `SentOffer`, …), so an app can name what it casts to.
@_exported import struct ECVProtocol.JoinParameters
@_exported import enum ECVProtocol.SignalingMessage
