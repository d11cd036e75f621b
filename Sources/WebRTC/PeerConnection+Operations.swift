import GLibCore
import Synchronization

/// The peer's one order of operations: webrtcbin's callbacks, remote signaling, rebuilds and the
/// controls of the layers above go into one inbox that the peer works through one at a time.
final class OperationInbox: Sendable {
    /// One item of the order of operations.
    enum Work: Sendable {
        /// A webrtcbin callback of session `number`.
        case session(number: Int, PeerSession.Input)
        /// Remote signaling, a rebuild, or a control from above.
        case operation(@Sendable (isolated PeerConnection) async -> Void)
    }

    private let continuation: AsyncStream<Work>.Continuation
    private let stream: AsyncStream<Work>
    /// The task working through the inbox, from `PeerConnection.start` until `finish()`.
    private let worker = Locked<Task<Void, Never>?>(nil)

    init() { (stream, continuation) = AsyncStream.makeStream(of: Work.self) }

    /// Queues `work`; false when the inbox is finished.
    func yield(_ work: Work) -> Bool {
        if case .terminated = continuation.yield(work) { return false }
        return true
    }

    func deliver(_ input: PeerSession.Input, from number: Int) { _ = yield(.session(number: number, input)) }

    /// Works through the inbox on `peer` (held weakly: the peer going ends the work).
    func start(on peer: PeerConnection) {
        let stream = self.stream
        let task = Task { [weak peer] in
            for await work in stream {
                guard let peer else { return }
                switch work {
                case .session(let number, let input): await peer.handle(input, from: number)
                case .operation(let body): await body(peer)
                }
            }
        }
        worker.withLock { $0 = task }
    }

    /// Takes nothing more, and stops working; what is still queued is dropped unrun.
    func finish() {
        continuation.finish()
        worker.withLock { $0?.cancel() }
    }
}

extension PeerConnection {
    func startOperations() { operations.start(on: self) }

    /// Runs `body` in this peer's one order of operations: after everything submitted before it
    /// (remote signaling, webrtcbin's callbacks, rebuilds, controls), before everything after it.
    /// Returns nil when the peer closed first and `body` never ran. Never call it from inside an
    /// operation (it would wait for itself).
    @discardableResult
    package nonisolated func perform<T: Sendable>(_ body: @escaping @Sendable (isolated PeerConnection) async -> T) async -> T? {
        await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
            let reply = OperationReply(continuation)
            submit { peer in reply.resume(await body(peer)) }
            // Not queued (closed), or dropped unrun when the peer closed: the reply's deinit answers nil.
        }
    }

    /// Queues `body` in the order of operations without waiting for it; false when the peer is
    /// closed. Calls made one after another from one thread run in that order.
    @discardableResult
    package nonisolated func submit(_ body: @escaping @Sendable (isolated PeerConnection) async -> Void) -> Bool {
        operations.yield(.operation(body))
    }

    /// One webrtcbin callback, taken only from the current session and while open.
    func handle(_ input: PeerSession.Input, from number: Int) async {
        guard number == session?.number, !isClosed else { return }
        switch input {
        case .negotiationNeeded:
            emit(.negotiationNeeded)
            guard started, role == .offerer else { return }
            await negotiate()
        case .localCandidate(let mline, let candidate):
            send(.candidate(mlineIndex: mline, mid: negotiation.localMids[mline], candidate: candidate))
        case .statesChanged(let snapshot):
            updateStates(snapshot)
        case .remoteStream(let stream):
            liveness.noteActivity()
            emit(.remoteStream(stream))
        case .remoteDataChannel(let handle):
            emit(.remoteDataChannel(handle))
        case .adoptedDataChannel(let remoteLabel, let configuredLabel):
            emit(.adoptedDataChannel(remoteLabel: remoteLabel, configuredLabel: configuredLabel))
        case .keyFrameWanted:
            if let session { hurryFeedback(session: session) }
        case .transportFeedback(let packets):
            if let session { adaptBandwidth(toFeedback: packets, session: session) }
        case .farEndClosed(let reason):
            emit(.farEndClosed(reason))
        case .failure(let message):
            emit(.error(message))
        }
    }
}

/// The answer to one `perform`: resumed once with the operation's result, or with nil when the
/// operation is dropped unrun (the peer closed with it still queued), so no caller waits for ever.
private final class OperationReply<T: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<T?, Never>?>

    init(_ continuation: CheckedContinuation<T?, Never>) { self.continuation = Mutex(continuation) }

    func resume(_ value: T?) {
        continuation.withLock { pending in
            pending?.resume(returning: value)
            pending = nil
        }
    }

    deinit { resume(nil) }
}
