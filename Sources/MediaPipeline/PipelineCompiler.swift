/// Compiles `MediaParameters` plus chosen sources and sinks into inspectable graphs, using an
/// element catalog instead of the live registry so results are deterministic and testable.
public struct PipelineCompiler: Sendable {
    public var catalog: any ElementCatalog
    public var presets: PresetLibrary

    public init(catalog: any ElementCatalog, presets: PresetLibrary = .builtIn) {
        self.catalog = catalog
        self.presets = presets
    }

    /// The send side of a call: the video branch (unless `videoCallEnabled` is false), the audio
    /// branch and, with echo cancellation, the speaker chain. Outputs end at payloaders.
    public func compileSend(parameters: MediaParameters,
                            video: VideoInputs = .single(.testPattern()),
                            audio: AudioSourceSpec = .testTone()) throws(PipelineCompileError) -> PipelineGraph {
        var builder = GraphBuilder(catalog: catalog)
        // Validate both codecs before building anything, so the first error is about what was asked.
        if parameters.videoCallEnabled { _ = try VideoBranch(parameters: parameters, presets: presets).validate() }
        _ = try AudioBranch(parameters: parameters, presets: presets).validate()

        var videoResult: VideoBranch.Result?
        if parameters.videoCallEnabled {
            videoResult = try VideoBranch(parameters: parameters, presets: presets).add(video, into: &builder)
        } else {
            builder.decide("video: none (videoCallEnabled=false), audio-only graph")
        }
        let audioResult = try AudioBranch(parameters: parameters, presets: presets).add(audio, into: &builder)
        if parameters.tracing { builder.decide("tracing: on (the runtime enables the latency tracer)") }

        return PipelineGraph(
            nodes: builder.nodes, links: builder.links,
            outputs: [videoResult?.output, audioResult.output].compactMap { $0 },
            decisions: builder.decisions,
            videoBitrate: videoResult?.bitrate, audioBitrate: audioResult.bitrate,
            videoMute: videoResult?.mute, audioMute: audioResult.mute,
            cameraSwitch: videoResult?.cameraSwitch,
            fileLoops: (videoResult?.loops ?? []) + [audioResult.loop].compactMap { $0 },
            speakerInput: audioResult.speakerInput,
            tracing: parameters.tracing)
    }

    /// The send side with a single video source.
    public func compileSend(parameters: MediaParameters, video: VideoSourceSpec,
                            audio: AudioSourceSpec = .testTone()) throws(PipelineCompileError) -> PipelineGraph {
        try compileSend(parameters: parameters, video: .single(video), audio: audio)
    }

    /// The graph piece for one incoming RTP stream as webrtcbin's src pad delivers it.
    /// `idPrefix` names the fragment's nodes (default: the sink's name, else `rx_<kind>`); give
    /// each fragment added to one pipeline a distinct prefix.
    public func compileReceive(kind: MediaKind, encodingName: String, sink: ReceiveSinkSpec,
                               parameters: MediaParameters, idPrefix: String? = nil) throws(PipelineCompileError) -> PipelineFragment {
        try ReceiveCompiler(catalog: catalog, presets: presets, parameters: parameters)
            .compile(kind: kind, encodingName: encodingName, sink: sink, idPrefix: idPrefix)
    }
}
