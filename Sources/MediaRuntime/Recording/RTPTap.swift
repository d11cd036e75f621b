import Foundation
import GLibCore
import GStreamer
import Synchronization

/// A tap on an RTP tee inside the call's pipeline: `tee → queue → appsink`, handing each packet
/// to a recording pipeline of its own.
///
/// Recording runs in a separate pipeline so nothing it does can reach the call: a full disk or a
/// muxer error never returns a flow error into the tee (which would stop the call's stream), its
/// end-of-stream never crosses into the call, and stopping it never blocks a call thread. The
/// queue decouples the tee's thread from the copy into the recorder; it is generous (5 s) and
/// leaks the oldest packets only if the handler stalls that long, so the call never waits.
final class RTPTap: Sendable {
    /// Five seconds of packets before the queue starts dropping the oldest: the last resort
    /// against a stalled consumer, never reached while the recorder keeps up.
    static let queueTime: UInt64 = 5_000_000_000

    let tee: Element
    private let bin: Bin
    private let teePad: Pad
    private let queue: Element
    private let sink: AppSink
    private let removed = Mutex(false)

    /// Links a new branch to `tee` while the call runs. `deliver` runs on the branch's streaming
    /// thread for every packet and must not block.
    init(tee: Element, namePrefix: String, deliver: @escaping @Sendable (Sample) -> Void) throws(RecordingError) {
        guard let bin = tee.parent as? Bin else {
            throw .pipeline("the RTP tee \(tee.name) is not inside a pipeline")
        }
        self.tee = tee
        self.bin = bin
        do throws(GStreamerError) {
            queue = try Element(factory: "queue", name: namePrefix + "_queue")
            try queue.set("max-size-buffers", UInt(0))
            try queue.set("max-size-bytes", UInt(0))
            try queue.set("max-size-time", Self.queueTime)
            try queue.set("leaky", "downstream")
            sink = try AppSink(name: namePrefix + "_sink", sync: false, maxBuffers: 0, drop: false)
            try sink.set("async", false)
            try sink.set("enable-last-sample", false)
            sink.setSampleHandler(deliver)
            try bin.add(queue)
            do throws(GStreamerError) {
                try bin.add(sink)
            } catch {
                bin.remove(queue)
                throw error
            }
            teePad = try tee.requestPad("src_%u")
        } catch {
            throw .gstreamer(error)
        }
        do throws(GStreamerError) {
            try queue.link(to: sink)
            sink.syncStateWithParent()
            queue.syncStateWithParent()
            guard let queueInput = queue.staticPad("sink") else { throw .padNotFound(element: queue.name, pad: "sink") }
            try teePad.link(to: queueInput)
        } catch {
            remove()
            throw .gstreamer(error)
        }
    }

    /// Asks the stream's source for a key frame through the tee: the remote sender (an RTCP PLI,
    /// or a FIR with `allHeaders`) for an incoming stream, our encoder for an outgoing one.
    @discardableResult
    func requestKeyFrame(allHeaders: Bool = false) -> Bool {
        guard !isRemoved, let input = queue.staticPad("sink") else { return false }
        return input.requestKeyFrame(allHeaders: allHeaders)
    }

    var isRemoved: Bool { removed.withLock { $0 } }

    /// Unlinks the branch from the tee first (the tee keeps feeding everyone else), then stops
    /// and removes the queue and the appsink. Safe after the tee itself was removed (a peer
    /// rebuild takes its incoming tees away). Idempotent.
    func remove() {
        let first = removed.withLock { removed in defer { removed = true }; return !removed }
        guard first else { return }
        if let peer = teePad.peer { teePad.unlink(from: peer) }
        tee.releaseRequestPad(teePad)
        queue.stopForRemoval()
        sink.stopForRemoval()
        bin.remove(queue)
        bin.remove(sink)
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
