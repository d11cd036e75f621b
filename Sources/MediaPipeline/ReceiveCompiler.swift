/// Compiles the graph piece for one incoming RTP stream: depayloader first (webrtcbin's src pad
/// links to it), then whatever the sink asks for.
struct ReceiveCompiler {
    var catalog: any ElementCatalog
    var presets: PresetLibrary
    var parameters: MediaParameters

    /// Decoded video for a Swift callback never waits for the clock (lowest latency; the
    /// jitterbuffer already smoothed arrival) and keeps only the newest 2 frames when the callback lags.
    static let rendererQueueFrames: UInt = 2
    /// Decoded audio for a Swift callback: up to 100 buffers (about 1-2 s) before dropping.
    static let audioSamplesQueueBuffers: UInt = 100
    /// Far-end audio held for playback at most (then the oldest is dropped): one second.
    static let playoutQueueNanoseconds: UInt = 1_000_000_000
    /// Recorders want H.264 as avc access units (what matroskamux and mp4mux take).
    static let recordableH264Caps = "video/x-h264,stream-format=avc,alignment=au"

    func compile(kind: MediaKind, encodingName: String, sink: ReceiveSinkSpec, idPrefix: String?) throws(PipelineCompileError) -> PipelineFragment {
        var builder = GraphBuilder(catalog: catalog)
        let prefix = idPrefix ?? Self.defaultPrefix(kind: kind, sink: sink)
        var exit: PadRef?
        var exitTarget: PadRef?
        let canonicalName: String
        switch kind {
        case .video:
            let codec = try VideoCodec.parse(encodingName)
            canonicalName = codec.rawValue
            try compileVideo(codec, sink: sink, prefix: prefix, into: &builder)
        case .audio:
            let codec = try AudioCodec.parse(encodingName)
            canonicalName = codec.rawValue
            if let last = try compileAudio(codec, sink: sink, prefix: prefix, into: &builder) {
                exit = PadRef(last)
                exitTarget = PadRef(AudioBranch.speakerMixerName)
            }
        }
        return PipelineFragment(kind: kind, encodingName: canonicalName, nodes: builder.nodes, links: builder.links,
                                entry: PadRef(builder.nodes[0].id, pad: "sink"), exit: exit, exitTarget: exitTarget,
                                decisions: builder.decisions)
    }

    static func defaultPrefix(kind: MediaKind, sink: ReceiveSinkSpec) -> String {
        switch sink {
        case .renderer(let name, _), .audioSamples(let name), .passthrough(let name): name
        case .discard, .playback, .preset: "rx_\(kind.rawValue)"
        }
    }

    private func compileVideo(_ codec: VideoCodec, sink: ReceiveSinkSpec, prefix: String, into builder: inout GraphBuilder) throws(PipelineCompileError) {
        // A stream joined mid-GOP, or one that lost packets, asks the sender for a keyframe (RTCP
        // PLI) instead of waiting for the next scheduled one.
        let depay = try builder.add("\(prefix)_depay", codec.depayloader, ["request-keyframe": .bool(true), "wait-for-keyframe": .bool(true)],
                                    role: .depayloader, purpose: "\(codec.rawValue) RTP depayloading")
        var chain = [depay]
        switch sink {
        case .renderer(let name, let format):
            chain += try addVideoDecoder(codec, prefix: prefix, into: &builder)
            chain.append(try builder.add("\(prefix)_convert", "videoconvert", role: .converter, purpose: "converting decoded video"))
            chain.append(try builder.addCaps("\(prefix)_format", "video/x-raw,format=\(format.rawValue)", role: .converter))
            chain.append(try builder.add(name, "appsink", ["sync": .bool(false), "max-buffers": .uint(Self.rendererQueueFrames), "drop": .bool(true)],
                                         role: .videoRenderer(name), purpose: "delivering decoded video to the application"))
            builder.decide("video renderer: appsink \(name) delivering \(format.rawValue) frames, newest \(Self.rendererQueueFrames) kept")
        case .discard:
            chain.append(try builder.add("\(prefix)_sink", "fakesink", ["sync": .bool(false)], role: .discardSink, purpose: "discarding video"))
            builder.decide("video: depayloaded and discarded")
        case .passthrough(let name):
            if codec == .h264 {
                chain.append(try builder.add("\(prefix)_parse", "h264parse", role: .videoParser, purpose: "parsing H.264 for recording"))
                chain.append(try builder.addCaps("\(prefix)_format", Self.recordableH264Caps, role: .converter))
            }
            chain.append(try builder.add(name, "tee", ["allow-not-linked": .bool(true)], role: .recorderTee(name), purpose: "letting a recorder attach"))
            builder.decide("video passthrough: encoded \(codec.rawValue) ends in tee \(name) (allow-not-linked) for a recorder to attach")
        case .preset(let name):
            let preset = try presets.preset(named: name, kind: .videoSink)
            chain += try addVideoDecoder(codec, prefix: prefix, into: &builder)
            chain.append(try builder.add("\(prefix)_convert", "videoconvert", role: .converter, purpose: "converting decoded video"))
            builder.chain(chain)
            chain = [try PresetExpansion.addSink(preset, prefix: "\(prefix)_sink", into: &builder, after: chain.last!)]
            builder.decide("video sink: preset \(name) (\(preset.launch))")
        case .playback, .audioSamples:
            throw .unsupportedReceive(kind: .video, encodingName: codec.rawValue, reason: "\(sink) is an audio sink; use .renderer, .passthrough, .discard or a video-sink preset")
        }
        builder.chain(chain)
    }

    /// GstVideoDecoder asks upstream for a sync point when a reference frame is missing, and drops
    /// corrupted frames instead of rendering garbage.
    static let decoderRecovery: KeyValuePairs<String, PropertyValue> = ["automatic-request-sync-points": .bool(true), "discard-corrupted-frames": .bool(true)]

    private func addVideoDecoder(_ codec: VideoCodec, prefix: String, into builder: inout GraphBuilder) throws(PipelineCompileError) -> [String] {
        switch codec {
        case .vp8:
            return [try builder.add("\(prefix)_decoder", "vp8dec", Self.decoderRecovery, role: .decoder, purpose: "VP8 decoding")]
        case .vp9:
            return [try builder.add("\(prefix)_decoder", "vp9dec", Self.decoderRecovery, role: .decoder, purpose: "VP9 decoding")]
        case .h264:
            let parse = try builder.add("\(prefix)_parse", "h264parse", role: .videoParser, purpose: "H.264 parsing")
            let candidates = ["avdec_h264", "openh264dec"]
            let installed = candidates.compactMap { catalog.factory(named: $0) }.sorted { $0.rank > $1.rank }
            guard let chosen = installed.first else {
                throw .missingElement(factory: "avdec_h264", package: "gstreamer1.0-libav (or openh264dec from gstreamer1.0-plugins-bad)", purpose: "H.264 decoding")
            }
            builder.decide("H.264 decoder: \(chosen.name) (rank \(chosen.rank))" + (installed.count > 1 ? ", over " + installed.dropFirst().map(\.name).joined(separator: ", ") : ""))
            return [parse, try builder.add("\(prefix)_decoder", chosen.name, Self.decoderRecovery, role: .decoder, purpose: "H.264 decoding")]
        }
    }

    /// Returns the node to link into the speaker mixer when playback joins the AEC speaker chain.
    private func compileAudio(_ codec: AudioCodec, sink: ReceiveSinkSpec, prefix: String, into builder: inout GraphBuilder) throws(PipelineCompileError) -> String? {
        let depay = try builder.add("\(prefix)_depay", "rtpopusdepay", role: .depayloader, purpose: "Opus RTP depayloading")
        var chain = [depay]
        var exitNode: String?
        func decode(_ builder: inout GraphBuilder) throws(PipelineCompileError) -> [String] {
            // Concealment and the far end's in-band FEC hide lost packets.
            [try builder.add("\(prefix)_decoder", "opusdec", ["plc": .bool(true), "use-inband-fec": .bool(true)], role: .decoder, purpose: "Opus decoding"),
             try builder.add("\(prefix)_convert", "audioconvert", role: .converter, purpose: "audio conversion"),
             try builder.add("\(prefix)_resample", "audioresample", role: .converter, purpose: "audio resampling")]
        }
        switch sink {
        case .playback:
            // Playback waits on the clock (a synced sink, or the speaker mixer). Without a queue that
            // wait would hold webrtcbin's thread, and every other branch of the stream's tee (a
            // recorder's tap) would get each packet only after it: the last ~0.2 s of a call never
            // reached the file. Leaky, so a stalled sink never holds the call either.
            chain.append(try builder.add("\(prefix)_playout", "queue",
                                         ["max-size-buffers": .uint(0), "max-size-bytes": .uint(0),
                                          "max-size-time": .uint(Self.playoutQueueNanoseconds), "leaky": .enumNick("downstream")],
                                         role: .playoutQueue, purpose: "decoupling clock-synced playback from the stream's other branches"))
            chain += try decode(&builder)
            chain.append(try builder.add("\(prefix)_playback_mute", "volume", ["mute": .bool(false)], role: .playbackMute,
                                         purpose: "silencing far-end playback on request"))
            if parameters.echoCancellationEnabled {
                chain.append(try builder.addCaps("\(prefix)_format", AudioSourceBuilder.rawCaps, role: .converter))
                exitNode = chain.last
                builder.decide("audio playback: joins \(AudioBranch.speakerMixerName) in the send graph, whose \(AudioBranch.echoProbeName) feeds the echo canceller")
            } else if parameters.useSpeakerPhone {
                chain.append(try builder.add("\(prefix)_sink", "autoaudiosink", role: .speakerSink, purpose: "playing far-end audio"))
                builder.decide("audio playback: autoaudiosink (no echo cancellation, so no echo probe)")
            } else {
                builder.chain(chain)
                let earpiece = try EarpieceOutput.add(parameters, prefix: "\(prefix)_sink", into: &builder)
                builder.link(chain.last!, earpiece.first)
                chain = [earpiece.last]
                builder.decide("audio playback: the earpiece output \(parameters.earpieceSink) (useSpeakerPhone=false, no echo cancellation)")
            }
        case .audioSamples(let name):
            chain += try decode(&builder)
            chain.append(try builder.addCaps("\(prefix)_format", AudioSourceBuilder.rawCaps, role: .converter))
            chain.append(try builder.add(name, "appsink", ["sync": .bool(false), "max-buffers": .uint(Self.audioSamplesQueueBuffers), "drop": .bool(true)],
                                         role: .audioSamplesSink(name), purpose: "delivering decoded audio to the application"))
            builder.decide("audio samples: appsink \(name) delivering S16LE mono 48 kHz")
        case .discard:
            chain.append(try builder.add("\(prefix)_sink", "fakesink", ["sync": .bool(false)], role: .discardSink, purpose: "discarding audio"))
            builder.decide("audio: depayloaded and discarded")
        case .passthrough(let name):
            chain.append(try builder.add(name, "tee", ["allow-not-linked": .bool(true)], role: .recorderTee(name), purpose: "letting a recorder attach"))
            builder.decide("audio passthrough: encoded Opus ends in tee \(name) (allow-not-linked) for a recorder to attach")
        case .preset(let name):
            let preset = try presets.preset(named: name, kind: .audioSink)
            chain += try decode(&builder)
            builder.chain(chain)
            chain = [try PresetExpansion.addSink(preset, prefix: "\(prefix)_sink", into: &builder, after: chain.last!)]
            builder.decide("audio sink: preset \(name) (\(preset.launch))")
        case .renderer:
            throw .unsupportedReceive(kind: .audio, encodingName: codec.rawValue, reason: ".renderer is a video sink; use .playback, .audioSamples, .passthrough, .discard or an audio-sink preset")
        }
        builder.chain(chain)
        return exitNode
    }
}

extension PresetExpansion {
    /// Adds a sink preset after `upstream` and links it; returns the preset's last node.
    static func addSink(_ preset: Preset, prefix: String, into builder: inout GraphBuilder, after upstream: String) throws(PipelineCompileError) -> String {
        let last = try add(preset, prefix: prefix, firstRole: .preset(preset.name), into: &builder)
        builder.link(upstream, prefix)
        return last
    }
}
