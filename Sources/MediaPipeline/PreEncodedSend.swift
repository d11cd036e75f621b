/// A send graph fed with media that is already encoded: `appsrc → [h264parse] → payloader` for
/// video and `appsrc → rtpopuspay` for audio, no source, conversion or encoder. A load generator
/// plays one clip encoded once into hundreds of calls this way, at the cost of payloading only.
///
/// Package-only: the SDK's users send camera, file, test-pattern or raw app media; this exists so
/// the benchmarks can measure the bots without the callers' encoders sharing the cores.
package enum PreEncodedSend {
    /// The appsrc the application pushes encoded video frames (one frame a buffer) into.
    package static let videoSource = "video_encoded"
    /// The appsrc the application pushes Opus packets (one 20 ms frame a buffer) into.
    package static let audioSource = "audio_encoded"

    /// The caps of the encoded video the `videoSource` appsrc announces.
    package static func videoCaps(_ codec: VideoCodec, width: Int, height: Int) -> String {
        switch codec {
        case .h264: "video/x-h264,stream-format=byte-stream,alignment=au,profile=constrained-baseline,width=\(width),height=\(height)"
        default: "video/x-\(codec.rawValue.lowercased()),width=\(width),height=\(height)"
        }
    }

    /// The caps of the Opus packets the `audioSource` appsrc announces.
    package static let audioCaps = "audio/x-opus,channel-mapping-family=0,channels=1,rate=48000"
}

extension PipelineCompiler {
    /// The send side for pre-encoded media in `parameters.videoCodec` and Opus. The appsrcs stamp
    /// each buffer with the running time it is pushed at (`do-timestamp`), so a clip pushed in a
    /// loop keeps monotonic timestamps; upstream force-key-unit events (PLI/FIR from the far end)
    /// reach the video appsrc's src pad, where the feeder answers them from its next key frame.
    /// No bitrate, mute or camera controls: the media is what it was encoded as.
    package func compilePreEncodedSend(parameters: MediaParameters) throws(PipelineCompileError) -> PipelineGraph {
        var builder = GraphBuilder(catalog: catalog)
        let codec = try VideoBranch(parameters: parameters, presets: presets).validate()
        _ = try AudioBranch(parameters: parameters, presets: presets).validate()
        let live: KeyValuePairs<String, PropertyValue> = ["format": .enumNick("time"), "is-live": .bool(true), "do-timestamp": .bool(true)]
        var outputs: [GraphOutput] = []
        if parameters.videoCallEnabled {
            let caps = PreEncodedSend.videoCaps(codec, width: parameters.videoWidth, height: parameters.videoHeight)
            let source = try builder.add(PipelineNode(id: PreEncodedSend.videoSource, factory: "appsrc",
                                                      properties: live.map { NodeProperty($0.key, $0.value) } + [NodeProperty("caps", .caps(caps))],
                                                      role: .videoSource("front")),
                                         purpose: "the pre-encoded video source")
            var chain = [source]
            if codec == .h264 {
                chain.append(try builder.add("video_parse", "h264parse", role: .videoParser, purpose: "H.264 parsing for RTP"))
            }
            chain.append(try builder.add("video_pay", codec.payloader, VideoBranch.payloaderProperties(codec), role: .videoPayloader,
                                         purpose: "\(codec.rawValue) RTP payloading"))
            builder.chain(chain)
            outputs.append(GraphOutput(kind: .video, node: chain.last!, pad: "src", encodingName: codec.rawValue,
                                       payloadType: VideoCodec.payloadType, clockRate: VideoCodec.clockRate))
            builder.decide("video: pre-encoded \(caps) pushed into appsrc \(PreEncodedSend.videoSource), no encoder")
        }
        let audio = try builder.add(PipelineNode(id: PreEncodedSend.audioSource, factory: "appsrc",
                                                 properties: live.map { NodeProperty($0.key, $0.value) } + [NodeProperty("caps", .caps(PreEncodedSend.audioCaps))],
                                                 role: .audioSource),
                                    purpose: "the pre-encoded audio source")
        let payloader = try builder.add("audio_pay", "rtpopuspay", ["pt": .uint(UInt(AudioCodec.payloadType))], role: .audioPayloader,
                                        purpose: "Opus RTP payloading")
        builder.chain([audio, payloader])
        outputs.append(GraphOutput(kind: .audio, node: payloader, pad: "src", encodingName: AudioCodec.opus.rawValue,
                                   payloadType: AudioCodec.payloadType, clockRate: AudioCodec.clockRate))
        builder.decide("audio: pre-encoded Opus pushed into appsrc \(PreEncodedSend.audioSource), no encoder")
        return PipelineGraph(nodes: builder.nodes, links: builder.links, outputs: outputs, decisions: builder.decisions,
                             videoBitrate: nil, audioBitrate: nil, videoMute: nil, audioMute: nil, cameraSwitch: nil,
                             fileLoops: [], speakerInput: nil, tracing: parameters.tracing)
    }
}
