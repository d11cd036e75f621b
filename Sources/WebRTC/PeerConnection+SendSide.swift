import GStreamer
import MediaPipeline
import MediaRuntime

/// What outlives every session: the pipeline, the running send graph and the tees its outputs
/// feed (which each session's webrtcbin and a recorder tap), and what a peer that sends nothing
/// offers to receive.
struct SendSide {
    var pipeline: Pipeline?
    /// The running send graph: mute, camera switch and bitrate controls live here.
    var media: SendMedia?
    var outputTees: [MediaKind: Element] = [:]
    /// The video codecs this end offers and accepts (nil without video): see `VideoNegotiation`.
    var videoPreference: VideoCodecPreference?
    var receiveOnlyCaps: [MediaKind: String] = [:]

    /// Stops the pipeline and lets go of everything in it.
    mutating func stop() {
        pipeline?.stop()
        pipeline = nil
        media = nil
        outputTees = [:]
    }
}

extension PeerConnection {
    /// The running send graph: mute, camera switch and bitrate controls live here.
    package var media: SendMedia? { sendSide.media }

    /// The video codecs this end offers and accepts (nil without video): see `VideoNegotiation`.
    var videoPreference: VideoCodecPreference? { sendSide.videoPreference }

    func buildSendSide(into pipeline: Pipeline) throws(PeerError) {
        let media = configuration.media
        do throws(PipelineCompileError) {
            if media.parameters.videoCallEnabled {
                sendSide.videoPreference = media.sendsPreEncodedMedia
                    ? VideoCodecPreference(codecs: [try VideoCodecPreference.preferred(media.parameters)], restricted: true)
                    : try VideoCodecPreference.resolve(media.parameters, catalog: compiler.catalog)
            }
        } catch {
            throw .unsupported(error)
        }
        guard media.sendsMedia else {
            sendSide.receiveOnlyCaps = media.receivesMedia ? Self.receiveOnlyCaps(for: media.parameters, video: videoPreference) : [:]
            return
        }
        let graph: PipelineGraph
        do throws(PipelineCompileError) {
            graph = try compileSendGraph(parameters: media.parameters)
        } catch {
            throw .unsupported(error)
        }
        do {
            let send = try SendMedia(graph: graph, into: pipeline)
            sendSide.media = send
            for output in graph.outputs {
                guard let source = send.output(output.kind) else { continue }
                let tee = try Element(factory: "tee", name: "out_\(output.kind.rawValue)")
                try tee.set(TeeProperty.allowNotLinked, true)
                try pipeline.add(tee)
                try source.element.link(pad: source.pad, to: tee, pad: nil)
                sendSide.outputTees[output.kind] = tee
            }
        } catch let error as MediaRuntimeError {
            throw .media(error)
        } catch let error as GStreamerError {
            throw .media(.gstreamer(error))
        } catch {
            throw .setup("\(error)")
        }
    }

    /// The send graph for `parameters` (the configured ones, or the same with the codec a
    /// negotiation chose), with the local preview when one is configured.
    func compileSendGraph(parameters: MediaParameters) throws(PipelineCompileError) -> PipelineGraph {
        let media = configuration.media
        if media.sendsPreEncodedMedia { return try compiler.compilePreEncodedSend(parameters: parameters) }
        let compiled = try compiler.compileSend(parameters: parameters, video: media.video, audio: media.audio)
        return media.localPreview.map { compiled.addingLocalPreview(named: $0) } ?? compiled
    }

    /// Codec preferences for a peer that only receives: Opus, and every video codec it accepts.
    static func receiveOnlyCaps(for parameters: MediaParameters, video: VideoCodecPreference?) -> [MediaKind: String] {
        var caps: [MediaKind: String] = [MediaKind.audio: LossRecoverySetup.offeredOpusCaps]
        if parameters.videoCallEnabled, let video { caps[.video] = video.offerCaps }
        return caps
    }

    /// The pipeline the call runs in, for components that add their own branches (recorders).
    package var mediaPipeline: Pipeline? { sendSide.pipeline }

    /// The tee carrying an outgoing stream's RTP packets (after our encoder and payloader), where a
    /// recorder taps local media without re-encoding. It outlives rebuilds.
    package func outgoingRTPTee(_ kind: MediaKind) -> Element? { sendSide.outputTees[kind] }

    /// Silences far-end audio playback (or plays it again), in this session and every later one.
    /// Recordings and audio delivered to the app are not affected: they branch off before it.
    package func setRemoteAudioPlaybackMuted(_ muted: Bool) throws(PeerError) {
        do throws(MediaRuntimeError) {
            try playback.setMuted(muted) { session?.incomingBranches ?? [] }
        } catch {
            throw .media(error)
        }
    }

    package var isRemoteAudioPlaybackMuted: Bool { playback.isMuted }

    /// The picture size we send now (the encoder's input); nil without video or before a frame.
    package var localVideoSize: PictureSize? { media?.videoSize }

    /// The far end's picture size as last received; nil before its first key frame.
    package var remoteVideoSize: PictureSize? { session?.remotePictureSize }

    /// The pipeline as Graphviz text, for diagnostics.
    package var dot: String { sendSide.pipeline?.dotDescription ?? "" }
}
