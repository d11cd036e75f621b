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
// The typed cause a failure of the call itself carries (`PeerError.cause`).
@_exported import enum MediaPipeline.CallFailure
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
@_exported import protocol ECV.ApplicationMediaCall
@_exported import struct ECV.MediaEndpoint
