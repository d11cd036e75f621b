import Foundation
import GLibCore
import GStreamer
import Synchronization

/// A tap on an RTP tee inside the call's pipeline: a probe on the tee's input that hands each
/// packet to a recording pipeline of its own.
///
/// Recording runs in a separate pipeline so nothing it does can reach the call: a full disk or a
/// muxer error never returns a flow error into the tee (which would stop the call's stream), its
/// end-of-stream never crosses into the call, and stopping it never blocks a call thread. The tap
/// itself is a pad probe, not a branch: `deliver` runs on the tee's own streaming thread and only
/// hands the packet (a reference, no copy) to the recording pipeline's appsrc, which never blocks
/// (it leaks its oldest packets when full). A branch would cost a queue's thread and a hand-over
/// per packet (80 a second per call, hundreds of calls in a recording bot), and its sink, added
/// while the pipeline changes state (a peer rebuild), would preroll and hold the call's stream.
final class RTPTap: Sendable {
    let tee: Element
    private let teeInput: Pad
    private let probe: PadProbe
    private let removed = Mutex(false)

    /// Starts handing `tee`'s packets to `deliver`, which runs on the tee's streaming thread for
    /// every packet and must not block.
    init(tee: Element, deliver: @escaping @Sendable (Sample) -> Void) throws(RecordingError) {
        guard tee.parent is Bin else { throw .pipeline("the RTP tee \(tee.name) is not inside a pipeline") }
        guard let input = tee.staticPad("sink") else { throw .gstreamer(.padNotFound(element: tee.name, pad: "sink")) }
        self.tee = tee
        teeInput = input
        probe = input.addSampleProbe(deliver)
    }

    /// Asks the stream's source for a key frame from the tee's input: the remote sender (an RTCP
    /// PLI, or a FIR with `allHeaders`) for an incoming stream, our encoder for an outgoing one.
    @discardableResult
    func requestKeyFrame(allHeaders: Bool = false) -> Bool {
        guard !isRemoved else { return false }
        return teeInput.requestKeyFrame(allHeaders: allHeaders)
    }

    var isRemoved: Bool { removed.withLock { $0 } }

    /// Stops the handing over. Safe after the tee itself was removed (a peer rebuild takes its
    /// incoming tees away). Idempotent.
    func remove() {
        let first = removed.withLock { removed in defer { removed = true }; return !removed }
        guard first else { return }
        probe.cancel()
    }
}

/// Maps one tap's buffer times onto the recording's media time (zero when it started).
///
/// Every buffer in a call pipeline, sent or received, carries that pipeline's running time, so one
/// offset, read from the pipeline's clock when the tap is made, places local and remote media on
/// the same timeline: a packet that waited in a queue (webrtcbin holds its sink pads until the
/// transport is up) keeps the time it was captured at instead of the time it reached the tap.
/// Only a pipeline without a clock yet, or a stream stamped in the future (not running time),
/// falls back to stamping by arrival.
final class MediaClockMapping: Sendable {
    static let plausibleSkew: Int64 = 2_000_000_000

    private let origin: ContinuousClock.Instant
    private let offset: Mutex<Int64?>

    init(origin: ContinuousClock.Instant, reference: Element) {
        self.origin = origin
        offset = Mutex(reference.runningTime.map { (ContinuousClock.now - origin).nanoseconds - $0.nanoseconds })
    }

    /// Media time in nanoseconds for a buffer at `runningTime`, or its arrival time.
    func mediaTime(runningTime: UInt64?) -> Int64 {
        let now = (ContinuousClock.now - origin).nanoseconds
        guard let runningTime else { return now }
        let offset = offset.withLock { offset -> Int64 in
            if let offset, Int64(runningTime) + offset - now < Self.plausibleSkew { return offset }
            let chosen = now - Int64(runningTime)
            offset = chosen
            return chosen
        }
        return Int64(runningTime) + offset
    }
}
