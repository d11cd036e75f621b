import Synchronization

/// The far end's audio as an `AsyncSequence` of frames, bounded: a consumer that falls behind
/// loses the oldest frames (counted in `droppedFrames`) and never holds up the call, its
/// playback or its recording. Ends when the call ends or on `stop()`.
public final class AudioFrameStream: AsyncSequence, Sendable {
    public typealias Element = AudioFrame
    public typealias AsyncIterator = AsyncStream<AudioFrame>.Iterator

    /// Frames held for a slow consumer by default: one second of 20 ms frames.
    public static let defaultCapacity = 50
    /// The most frames a stream holds (10 s of 10 ms frames).
    public static let capacityRange = 1...1000

    public let format: AudioFormat
    public let capacity: Int
    private let stream: AsyncStream<AudioFrame>
    private let continuation: AsyncStream<AudioFrame>.Continuation
    private let drops = Atomic<Int>(0)
    private let delivered = Atomic<Int>(0)
    private let onStop: StopHook

    /// Made by the call: `onStop` detaches the tap (once, from `stop()` or the consumer's end).
    package init(format: AudioFormat, capacity: Int, onStop: @escaping @Sendable () -> Void) throws(AppMediaError) {
        guard Self.capacityRange.contains(capacity) else {
            throw .invalidFormat("a buffer of \(capacity) frames; use \(Self.capacityRange.lowerBound)…\(Self.capacityRange.upperBound)")
        }
        self.format = format
        self.capacity = capacity
        (stream, continuation) = AsyncStream.makeStream(of: AudioFrame.self, bufferingPolicy: .bufferingNewest(capacity))
        let hook = StopHook(onStop)
        self.onStop = hook
        // Not run right here: the handler runs inside the consumer task's cancellation, and
        // detaching stops a pipeline, which waits for a streaming thread that may be handing
        // this very stream a frame (a deadlock, seen when a reading task was cancelled).
        continuation.onTermination = { _ in Task.detached { hook.fire() } }
    }

    // A stream the app let go of detaches from the call (the termination handler runs once).
    deinit { continuation.finish() }

    /// Hands one frame on; never waits. Called on a streaming thread.
    package func deliver(_ frame: AudioFrame) {
        delivered.add(1, ordering: .relaxed)
        if case .dropped = continuation.yield(frame) { drops.add(1, ordering: .relaxed) }
    }

    /// Ends the sequence (the call ended); frames already held are still read.
    package func finish() { continuation.finish() }

    /// Frames lost because the consumer fell behind.
    public var droppedFrames: Int { drops.load(ordering: .relaxed) }
    /// Frames the call produced for this stream (read or dropped or still held).
    public var producedFrames: Int { delivered.load(ordering: .relaxed) }

    /// Stops delivering and detaches from the call; the sequence ends.
    public func stop() { continuation.finish() }

    public func makeAsyncIterator() -> AsyncStream<AudioFrame>.Iterator { stream.makeAsyncIterator() }
}

/// Runs a stop action once, from whichever end comes first.
private final class StopHook: Sendable {
    private let action: Mutex<(@Sendable () -> Void)?>
    init(_ action: @escaping @Sendable () -> Void) { self.action = Mutex(action) }
    func fire() { action.withLock { action in defer { action = nil }; return action }?() }
}
