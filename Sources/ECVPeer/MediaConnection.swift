import CallEngine
import ECV
import ECVProtocol
import Foundation
import GLibCore
import MediaPipeline
import MediaRuntime
import Synchronization
import WebRTC

/// What a media connection reports (SkyWay's `SKW_MEDIACONNECTION_EVENT_*`).
public enum MediaConnectionEvent: Sendable {
    /// The remote party's stream arrived (once, with its first track).
    case stream(MediaStream)
    case close
    case error(PeerError)
}

public enum MediaConnectionEventType: String, Sendable, Hashable {
    case STREAM, CLOSE, ERROR
}

extension MediaConnectionEvent: KindedEvent {
    public var kind: MediaConnectionEventType {
        switch self {
        case .stream: .STREAM
        case .close: .CLOSE
        case .error: .ERROR
        }
    }

    var isLasting: Bool { if case .error = self { false } else { true } }
}

/// A call with another peer (SkyWay's `SKWMediaConnection`, PeerJS's `MediaConnection`): our
/// `call(peerId:stream:)`, or an incoming one from the CALL event, which `answer(stream:)` takes.
///
/// Each connection is one WebRTC peer connection with its own media graph, so a peer can hold
/// several at once. Like PeerJS 1.5, the caller also opens a data channel whose closing tells
/// the other side the call ended; a peer that vanishes is noticed by the server (`LEAVE`) or by
/// the media falling silent. Recording is the ECV call's recorder: both directions, no re-encoding.
public final class MediaConnection: Sendable {
    /// The remote peer's id.
    public let peer: String
    public let connectionId: String
    /// What the caller attached to the call (PeerJS `metadata`).
    public let metadata: PeerJSValue?
    let outgoing: Bool
    let signaling: PeerJSLegSignaling
    let ice: @Sendable () -> PeerICE
    let onEnded: @Sendable (MediaConnection) -> Void
    let hub = EventHub<MediaConnectionEvent>()

    struct State {
        var leg: CallLeg?
        var localStream: MediaStream?
        /// The far end's stream, shown once its first track arrived.
        var remoteStream: MediaStream?
        var started = false
        var open = false
        var closed = false
        /// The call's closing channel (created by the caller, adopted by the callee).
        var control: DataChannelHandle?
    }
    let state = Mutex(State())
    /// The far end's stream, fed from the start, announced (STREAM) with its first track.
    let arrivingStream = MediaStream(remote: ())
    /// The connection's own tasks (the closing channel's watch), cancelled when it ends.
    let tasks = TaskSet()

    init(peer: String, connectionId: String, metadata: PeerJSValue?, outgoing: Bool, send: @escaping @Sendable (PeerJSMessage) -> Bool,
         ice: @escaping @Sendable () -> PeerICE, onEnded: @escaping @Sendable (MediaConnection) -> Void) {
        self.peer = peer
        self.connectionId = connectionId
        self.metadata = metadata
        self.outgoing = outgoing
        self.ice = ice
        self.onEnded = onEnded
        signaling = PeerJSLegSignaling(ConnectionSignaling(remotePeer: peer, connectionId: connectionId, type: .media, send: send) { payload in
            payload.metadata = metadata
        }, role: outgoing ? .offerer : .answerer)
        InstanceCounter.increment("MediaConnection")
    }

    deinit { InstanceCounter.decrement("MediaConnection") }

    // MARK: Events

    public func events() -> AsyncStream<MediaConnectionEvent> { hub.subscribe() }

    /// Sets the callback for `type` (nil removes it), as `[_mediaConnection on:… callback:…]`.
    public func on(_ type: MediaConnectionEventType, callback: (@Sendable (MediaConnectionEvent) -> Void)?) { hub.on(type, callback) }

    public var isOpen: Bool { state.withLock { $0.open && !$0.closed } }
    public var isClosed: Bool { state.withLock { $0.closed } }
    public var localStream: MediaStream? { state.withLock { $0.localStream } }
    public var remoteStream: MediaStream? { state.withLock { $0.remoteStream } }

    // MARK: Answer and close

    /// Takes an incoming call, sending `stream` (nil: receive only). Once per connection.
    public func answer(stream: MediaStream? = nil) {
        guard !outgoing else { hub.emit(.error(PeerError(.invalidArgument, "answer(stream:) is for incoming calls"))); return }
        tasks.run { await self.start(stream: stream) }
    }

    /// Ends the call on both sides. Idempotent; CLOSE follows.
    public func close() {
        Task { await self.end(error: nil) }
    }

    /// Ends the call and waits until its media is released and its recording finalised.
    public func closeAndWait() async { await end(error: nil) }

    // MARK: Recording

    /// Records the call as the ECV call records: both directions to `url`, finalised on close.
    public func startRecording(to url: URL, format: RecordingFormat = .matroska, layout: RecordingLayout = .separateTracks) async throws(PeerError) {
        guard let leg = state.withLock({ $0.leg }) else { throw PeerError.recording("the call's media has not started") }
        do {
            try await leg.startRecording(to: url, format: format, layout: layout, labels: RecordingLabels(local: "local", remote: "remote"))
        } catch .alreadyStarted {
            throw PeerError.recording("the call is already being recorded")
        } catch .alreadyStopped {
            throw PeerError.recording("the call ended while the recording started")
        } catch {
            throw PeerError.recording("cannot record to \(url.path): \(error)")
        }
    }

    /// Finalises the recording and returns what it holds; nil when none runs.
    @discardableResult
    public func stopRecording() async throws(PeerError) -> RecordingSummary? {
        do { return try await state.withLock({ $0.leg })?.stopRecording() } catch {
            throw PeerError.recording("the recording was not finalised: \(error)")
        }
    }

    /// A stats sample; nil before the media runs or after the call ended.
    public func stats() async -> PeerStats? { await state.withLock({ $0.leg })?.stats() }

    /// The negotiated codecs by kind ("video": "VP8/96"), once offer and answer completed.
    public func negotiatedCodecs() async -> [String: String] { state.withLock({ $0.leg })?.negotiatedCodecNames ?? [:] }
}
