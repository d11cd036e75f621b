/// Compiles the video half of the send graph:
/// inputs → [input-selector] → videobalance (mute) → leaky queue → encoder → [caps, h264parse] → payloader.
struct VideoBranch {
    var parameters: MediaParameters
    var presets: PresetLibrary

    /// Allowed `videoFps` values besides 0 (= 30).
    static let frameRateRange = 1...120
    /// Allowed `videoMaxBitrate` values besides 0 (= resolution default), kbit/s.
    static let bitrateRangeKbps = 1...100_000
    /// Largest width or height accepted (8K UHD).
    static let maximumDimension = 7680
    /// The queue in front of the encoder holds at most this many frames and drops the oldest:
    /// a slow encoder then skips stale frames instead of adding latency.
    static let encoderQueueFrames = 2
    /// Payload size limit: 1200 bytes leaves room for SRTP, TURN and VPN overhead under a
    /// 1500-byte path MTU, as browsers do.
    static let mtu: UInt = 1200
    /// Keyframes at least every 2 s, so a recorder attached mid-call or a lost keyframe whose PLI
    /// was also lost recovers quickly; PLIs from the far end still force earlier ones.
    static let keyframeIntervalSeconds = 2

    /// The video payloader's settings: 15-bit picture ids for VP8/VP9; for H.264, SPS/PPS with
    /// every IDR (a receiver can start at any key frame) and no aggregation delay.
    static func payloaderProperties(_ codec: VideoCodec) -> KeyValuePairs<String, PropertyValue> {
        codec == .h264
            ? ["pt": .uint(UInt(VideoCodec.payloadType)), "mtu": .uint(mtu), "config-interval": .int(-1), "aggregate-mode": .enumNick("zero-latency")]
            : ["pt": .uint(UInt(VideoCodec.payloadType)), "mtu": .uint(mtu), "picture-id-mode": .enumNick("15-bit")]
    }

    /// Black frames for mute: contrast 0 flattens luma to the black level (with brightness 0 it
    /// lands exactly on limited-range black, Y=16) and saturation 0 centres chroma (U=V=128);
    /// measured on I420 with GStreamer 1.22. (brightness -1 would give Y=0, below legal black.)
    /// At brightness 0, contrast 1, saturation 1 (hue 0) videobalance is passthrough: frames
    /// leave byte-identical and nothing is processed, so the stage costs nothing while unmuted.
    static let mute = (muted: [NodeProperty("brightness", .double(0)), NodeProperty("contrast", .double(0)), NodeProperty("saturation", .double(0))],
                       unmuted: [NodeProperty("brightness", .double(0)), NodeProperty("contrast", .double(1)), NodeProperty("saturation", .double(1))])

    struct Result {
        var output: GraphOutput
        var bitrate: BitrateControl
        var mute: MuteControl
        var cameraSwitch: CameraSwitch?
        var loops: [FileLoop]
    }

    func validate() throws(PipelineCompileError) -> VideoCodec {
        let codec = try VideoCodecPreference.preferred(parameters)
        let (width, height) = (parameters.videoWidth, parameters.videoHeight)
        if width <= 0 || height <= 0 {
            throw .invalidVideoSize(width: width, height: height, reason: "width and height must be positive")
        }
        if width > Self.maximumDimension || height > Self.maximumDimension {
            throw .invalidVideoSize(width: width, height: height, reason: "width and height must be at most \(Self.maximumDimension)")
        }
        if width % 2 != 0 || height % 2 != 0 {
            throw .invalidVideoSize(width: width, height: height, reason: "width and height must be even (the encoders use 4:2:0 chroma, which halves both)")
        }
        if parameters.videoFps != 0, !Self.frameRateRange.contains(parameters.videoFps) {
            throw .invalidFrameRate(asked: parameters.videoFps, allowed: Self.frameRateRange)
        }
        if parameters.videoMaxBitrate != 0, !Self.bitrateRangeKbps.contains(parameters.videoMaxBitrate) {
            throw .invalidBitrate(parameter: "videoMaxBitrate", kbps: parameters.videoMaxBitrate, allowed: Self.bitrateRangeKbps)
        }
        return codec
    }

    func add(_ inputs: VideoInputs, into builder: inout GraphBuilder) throws(PipelineCompileError) -> Result {
        let codec = try validate()
        let fps = parameters.effectiveVideoFps
        let kbps = parameters.effectiveVideoMaxBitrateKbps
        builder.decide("video: \(parameters.videoWidth)x\(parameters.videoHeight) at \(fps) fps" + (parameters.videoFps == 0 ? " (videoFps 0 → default \(fps))" : ""))
        builder.decide("video bitrate: \(kbps) kbit/s" + (parameters.videoMaxBitrate == 0
            ? " (videoMaxBitrate 0 → default for \(parameters.videoWidth * parameters.videoHeight) pixels)" : " (videoMaxBitrate)"))
        let selection = try EncoderSelection.choose(codec: codec, hardwareAllowed: parameters.videoCodecHwAcceleration, catalog: builder.catalog)

        let sources = VideoSourceBuilder(parameters: parameters, presets: presets)
        var loops: [FileLoop] = []
        var cameraSwitch: CameraSwitch?
        let selected: String
        if let back = inputs.back {
            let order: [(String, VideoSourceSpec)] = inputs.initial == .front ? [("front", inputs.front), ("back", back)] : [("back", back), ("front", inputs.front)]
            var ends: [(String, String)] = []
            for (name, spec) in order {
                let added = try sources.add(spec, inputName: name, prefix: name, into: &builder)
                ends.append((name, added.last))
                if let loop = added.loop { loops.append(loop) }
            }
            selected = try builder.add("video_select", "input-selector", role: .videoSelector, purpose: "switching between front and back cameras")
            var pads: [String: String] = [:]
            for (index, (name, end)) in ends.enumerated() {
                builder.link(end, selected, toPad: "sink_\(index)")
                pads[name] = "sink_\(index)"
            }
            cameraSwitch = CameraSwitch(selector: selected, pads: pads, initial: inputs.initial.rawValue)
            builder.decide("camera switch: input-selector video_select, front=\(pads["front"]!) back=\(pads["back"]!), \(inputs.initial.rawValue) active at start")
        } else {
            let added = try sources.add(inputs.front, inputName: "front", prefix: "video", into: &builder)
            selected = added.last
            if let loop = added.loop { loops.append(loop) }
        }

        let mute = try builder.add(PipelineNode(id: "video_mute", factory: "videobalance", properties: Self.mute.unmuted, role: .videoMute),
                                   purpose: "video mute (black frames)")
        let queue = try builder.add("video_queue", "queue", ["leaky": .enumNick("downstream"), "max-size-buffers": .uint(UInt(Self.encoderQueueFrames)),
                                                             "max-size-bytes": .uint(0), "max-size-time": .uint(0)],
                                    role: .videoEncoderQueue, purpose: "decoupling the encoder thread")
        var chain = [selected, mute, queue]
        for (index, step) in selection.profile.upload.enumerated() {
            chain.append(try builder.add("video_upload\(index)", step.factory, role: .videoEncoderUpload, purpose: "feeding \(selection.profile.factory)"))
            if let caps = step.capsAfter { chain.append(try builder.addCaps("video_upload\(index)_caps", caps, role: .videoEncoderUpload)) }
        }
        let settings = VideoEncoderProfile.Settings(kbps: kbps, keyframeInterval: fps * Self.keyframeIntervalSeconds)
        let encoder = try builder.add(PipelineNode(id: "video_encoder", factory: selection.profile.factory,
                                                   properties: selection.profile.properties(settings), role: .videoEncoder),
                                      purpose: "\(codec.rawValue) encoding")
        builder.decide(selection.decision)
        chain.append(encoder)
        if codec == .h264 {
            // Constrained baseline is the H.264 profile every WebRTC endpoint decodes.
            chain.append(try builder.addCaps("video_encoded_caps", "video/x-h264,profile=constrained-baseline", role: .videoEncodedFormat))
            chain.append(try builder.add("video_parse", "h264parse", role: .videoParser, purpose: "H.264 parsing for RTP"))
        }
        let payloader = try builder.add("video_pay", codec.payloader, Self.payloaderProperties(codec), role: .videoPayloader,
                                        purpose: "\(codec.rawValue) RTP payloading")
        chain.append(payloader)
        builder.chain(chain)
        return Result(output: GraphOutput(kind: .video, node: payloader, pad: "src", encodingName: codec.rawValue,
                                          payloadType: VideoCodec.payloadType, clockRate: VideoCodec.clockRate),
                      bitrate: selection.profile.bitrateControl(node: encoder, kbps: kbps),
                      mute: MuteControl(node: mute, muted: Self.mute.muted, unmuted: Self.mute.unmuted),
                      cameraSwitch: cameraSwitch, loops: loops)
    }
}
