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
// The typed cause a failure of the call itself carries (`ErrorObject.cause`, `ECVError.cause`).
@_exported import enum MediaPipeline.CallFailure
// What some events carry as `objData`: the join answer (`JoinedRoom`) and the offer or answer
// (`GotOffer`, `SentOffer`, …), so an app can name what it casts to.
@_exported import struct ECVProtocol.JoinParameters
@_exported import enum ECVProtocol.SignalingMessage
// Application media (bots that hear and speak): see ApplicationMediaCall.
@_exported import struct MediaPipeline.AudioFormat
@_exported import struct MediaPipeline.AudioFrame
@_exported import struct MediaPipeline.AudioClip
@_exported import class MediaPipeline.AudioFrameStream
@_exported import enum MediaPipeline.AppMediaError
@_exported import enum MediaPipeline.VoiceActivity
@_exported import struct MediaPipeline.VoiceActivityOptions
@_exported import struct MediaPipeline.VoiceActivityDetector
@_exported import enum MediaPipeline.PlayoutMode
@_exported import enum MediaPipeline.PlaybackOutcome
@_exported import class MediaPipeline.Playback
@_exported import struct MediaPipeline.BargeIn
@_exported import struct MediaPipeline.Transcript
@_exported import protocol MediaPipeline.Transcriber
@_exported import protocol MediaPipeline.TranscriptionSession
@_exported import protocol MediaPipeline.SpeechSynthesizer
@_exported import enum MediaPipeline.SpeechText
@_exported import enum MediaPipeline.Heard
@_exported import class MediaPipeline.VideoFrameWriter
@_exported import enum MediaPipeline.RendererPixelFormat
@_exported import struct MediaPipeline.UtteranceTranscription
