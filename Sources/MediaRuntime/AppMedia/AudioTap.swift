import GLibCore
import GStreamer
import MediaPipeline
import Synchronization

/// Decodes one incoming Opus stream for the application, in a pipeline of its own fed by a probe
/// on the stream's RTP tee (as the recorder is: see `RTPTap`), so nothing here can hold up the
/// call: a slow consumer loses frames in `AudioFrameStream`, a decoder error ends this tap only.
///
/// appsrc (RTP) → rtpopusdepay → opusdec → audioconvert → audioresample → caps(format)
///   → audiobuffersplit (exact 10/20 ms frames) → appsink
///
/// Buffers keep the call pipeline's running time (the tap's segment starts at zero), so frame
/// times are on the call's timeline.
package final class AudioTap: Sendable {
    /// The RTP caps used until the tee states its own (a stream whose first packet has not passed yet).
    static let defaultRTPCaps = "application/x-rtp,media=audio,clock-rate=48000,encoding-name=OPUS,payload=111"
    /// RTP packets held in the tap's appsrc before it drops (a second of 20 ms packets).
    static let queuedPacketBytes: UInt64 = 64 * 1024

    private let pipeline: Pipeline
    private let source: AppSource
    private let probe: PadProbe
    private let removed = Mutex(false)

    /// Starts decoding `tee`'s packets (an incoming Opus RTP stream) to `format`; `deliver` runs on
    /// the tap's streaming thread for every frame and must not block.
    package init(tee: Element, format: AudioFormat, deliver: @escaping @Sendable (AudioFrame) -> Void) async throws(AppMediaError) {
        guard let input = tee.staticPad("sink") else { throw .media("the RTP tee \(tee.name) has no sink pad") }
        let rtpCaps = input.currentCaps?.description ?? Self.defaultRTPCaps
        let description = "appsrc name=rtp format=time is-live=true do-timestamp=false ! rtpopusdepay ! opusdec plc=true use-inband-fec=true "
            + "! audioconvert ! audioresample ! \(format.caps) "
            + "! audiobuffersplit output-buffer-duration=\(format.frameMilliseconds)/1000 strict-buffer-size=true "
            + "! appsink name=pcm sync=false max-buffers=8 drop=true"
        let pipeline: Pipeline
        let source: AppSource
        let sink: AppSink
        do throws(GStreamerError) {
            pipeline = try Pipeline(launch: description)
            guard let rtp = pipeline.element(named: "rtp"), let pcm = pipeline.element(named: "pcm") else {
                throw .notSupported("the audio tap pipeline lost its appsrc or appsink")
            }
            source = try AppSource(rtp)
            try source.configure(caps: try Caps(rtpCaps), maxBytes: Self.queuedPacketBytes)
            sink = try AppSink(pcm)
        } catch {
            throw .media("building the audio tap: \(error)")
        }
        let frameBytes = format.bytesPerFrame
        // The splitter resyncs to the decoder's times after a gap (the first packets, a loss), which
        // can step a few ms back; the app gets times that only go forward, as a timeline should.
        let nextTime = Mutex<UInt64>(0)
        sink.setSampleHandler { sample in
            let bytes = sample.bytes
            guard bytes.count == frameBytes else { return }
            let pts = nextTime.withLock { next in
                let pts = max(sample.pts ?? next, next)
                next = pts + format.frameNanoseconds
                return pts
            }
            deliver(AudioFrame(trusted: format, pts: pts, data: bytes))
        }
        self.pipeline = pipeline
        self.source = source
        // Packets keep the call's running time; a full queue (the tap stalled) drops the packet,
        // and so does one that comes before the tap plays. The probe goes in first: a live
        // pipeline's sink completes its change to PLAYING only with a first buffer.
        probe = input.addSampleProbe { [source] packet in
            do throws(GStreamerError) { try source.push(packet, pts: packet.runningTime ?? packet.pts) } catch { return }
        }
        do throws(GStreamerError) {
            try await pipeline.play()
        } catch {
            remove()
            throw .media("starting the audio tap: \(error)")
        }
    }

    /// Stops decoding and releases the pipeline. Idempotent; safe after the tee is gone.
    package func remove() {
        let first = removed.withLock { removed in defer { removed = true }; return !removed }
        guard first else { return }
        probe.cancel()
        source.endOfStream()
        pipeline.stop()
    }

    deinit { remove() }
}
