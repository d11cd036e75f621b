import MediaPipeline

/// What `Navigator.getUserMedia(constraints:)` captures and how it is sent (SkyWay's
/// `SKWMediaConstraints`). The camera is any video source: a test pattern by default (front:
/// SMPTE bars, back: a moving ball), a V4L2 device, a file, or frames the app pushes.
public struct MediaConstraints: Sendable {
    public typealias CameraPosition = VideoInputs.CameraPosition

    /// The upper limits of the picture's width and height, in pixels: the camera's own size is
    /// sent, scaled down to fit within them with its aspect kept (a 1280×960 camera under
    /// 960×540 sends 720×540).
    public var maxWidth: Int
    public var maxHeight: Int
    public var minFrameRate: Int
    /// The frame rate sent.
    public var maxFrameRate: Int
    /// Which camera starts (`switchCamera()` toggles).
    public var cameraPosition: CameraPosition
    /// Whether to send audio and video.
    public var audioFlag: Bool
    public var videoFlag: Bool
    /// "VP8", "VP9" or "H264", as in `ConnectParameters.videoCodec`.
    public var videoCodec: String
    /// Kilobits per second; 0: the codec's default for the size.
    public var videoMaxBitrate: Int
    public var audioCodec: String
    public var audioStartBitrate: Int
    public var cameras: VideoInputs
    public var microphone: AudioSourceSpec

    public init(maxWidth: Int = 640, maxHeight: Int = 480, minFrameRate: Int = 10, maxFrameRate: Int = 30,
                cameraPosition: CameraPosition = .front, audioFlag: Bool = true, videoFlag: Bool = true, videoCodec: String = "VP8",
                videoMaxBitrate: Int = 0, audioCodec: String = "OPUS", audioStartBitrate: Int = 32,
                cameras: VideoInputs = .cameras(front: .testPattern(pattern: "smpte"), back: .testPattern(pattern: "ball")),
                microphone: AudioSourceSpec = .testTone()) {
        self.maxWidth = maxWidth
        self.maxHeight = maxHeight
        self.minFrameRate = minFrameRate
        self.maxFrameRate = maxFrameRate
        self.cameraPosition = cameraPosition
        self.audioFlag = audioFlag
        self.videoFlag = videoFlag
        self.videoCodec = videoCodec
        self.videoMaxBitrate = videoMaxBitrate
        self.audioCodec = audioCodec
        self.audioStartBitrate = audioStartBitrate
        self.cameras = cameras
        self.microphone = microphone
    }

    /// The media facts the pipeline compiler takes.
    var parameters: MediaParameters {
        var parameters = MediaParameters()
        parameters.videoCallEnabled = videoFlag
        parameters.videoWidth = maxWidth
        parameters.videoHeight = maxHeight
        parameters.videoSizeIsUpperBound = true
        parameters.videoFps = max(minFrameRate, maxFrameRate)
        parameters.videoMaxBitrate = videoMaxBitrate
        parameters.videoCodec = videoCodec
        parameters.audioCodec = audioCodec
        parameters.audioStartBitrate = audioStartBitrate
        parameters.noAudioProcessing = true
        return parameters
    }

    var videoInputs: VideoInputs {
        var inputs = cameras
        if inputs.back != nil { inputs.initial = cameraPosition }
        return inputs
    }

    func problem() -> String? {
        if maxWidth < 16 || maxHeight < 16 || maxWidth > 3840 || maxHeight > 2160 { return "maxWidth/maxHeight must be 16…3840 × 16…2160" }
        if minFrameRate < 1 || maxFrameRate < 1 || maxFrameRate > 60 || minFrameRate > maxFrameRate { return "frame rates must be 1…60, min ≤ max" }
        if !["VP8", "VP9", "H264"].contains(videoCodec.uppercased()) { return "videoCodec \(videoCodec) is not VP8, VP9 or H264" }
        if !audioFlag && !videoFlag { return "a stream needs audio or video (audioFlag and videoFlag are both false)" }
        return nil
    }
}
