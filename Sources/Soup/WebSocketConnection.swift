import Foundation
import Synchronization

/// What arrives on a WebSocket, in order. `.closed` is always the last event and arrives exactly
/// once, whether the peer closed, the network failed or we closed.
public enum WebSocketEvent: Sendable, Equatable {
    case text(String)
    case binary([UInt8])
    /// A protocol or I/O error; a fatal one is followed by `.closed`.
    case error(String)
    /// `code` is the peer's close code, or 1006 (abnormal closure) when the connection ended
    /// without a close frame.
    case closed(code: UInt16, reason: String)
}

public enum WebSocketState: Sendable, Equatable, CustomStringConvertible {
    case open, closing, closed

    public var description: String {
        switch self {
        case .open: "open"
        case .closing: "closing"
        case .closed: "closed"
        }
    }
}

public enum WebSocketError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Sending needs an open connection.
    case notOpen(url: String, state: WebSocketState)
    /// Close codes must be 1000–1003, 1007–1014 or 3000–4999 (RFC 6455 §7.4).
    case invalidCloseCode(UInt16)
    /// A close reason is limited to 123 bytes of UTF-8.
    case closeReasonTooLong(bytes: Int)

    public var description: String {
        switch self {
        case .notOpen(let url, let state): "cannot send on WebSocket \(url): the connection is \(state)"
        case .invalidCloseCode(let code): "\(code) is not a close code an endpoint may send"
        case .closeReasonTooLong(let bytes): "close reason is \(bytes) bytes; the limit is 123"
        }
    }
}

/// The events of one WebSocket, in order: an `AsyncSequence` over the connection's stream that
/// counts, as it hands them out, the text and binary bytes received but not yet read, so that a
/// peer sending faster than they are read can be bounded (`HTTPServer`'s
/// `maxUnreadIncomingWebSocketBytes`). Iterate it once.
public struct WebSocketEvents: AsyncSequence, Sendable {
    public typealias Element = WebSocketEvent
    let stream: AsyncStream<WebSocketEvent>
    let unread: UnreadBytes

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<WebSocketEvent>.AsyncIterator
        let unread: UnreadBytes

        public mutating func next() async -> WebSocketEvent? {
            let event = await base.next()
            if let event { unread.read(event.payloadBytes) }
            return event
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: stream.makeAsyncIterator(), unread: unread) }
}

/// Bytes of text and binary messages received and not yet read from `WebSocketEvents`.
final class UnreadBytes: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    /// Adds `bytes`; false (and nothing added) when that would pass `limit`.
    func receive(_ bytes: Int, limit: Int?) -> Bool {
        count.withLock { count in
            if let limit, count + bytes > limit { return false }
            count += bytes
            return true
        }
    }
    func read(_ bytes: Int) { count.withLock { $0 -= bytes } }
}

extension WebSocketEvent {
    /// The message's bytes (0 for errors and the close).
    var payloadBytes: Int {
        switch self {
        case .text(let text): text.utf8.count
        case .binary(let bytes): bytes.count
        case .error, .closed: 0
        }
    }
}

/// One WebSocket, client or server side.
///
/// Sends may be called from any task; they are queued to the main loop in call order. Keep a
/// reference for as long as you want the connection: when the last one goes, the connection is
/// closed with 1001 (going away).
public final class WebSocketConnection: Sendable {
    public enum Side: Sendable { case client, server }

    /// Every message and the final `.closed`. Iterate it once.
    public let events: WebSocketEvents
    public let url: String
    public let side: Side
    /// The subprotocol both sides agreed on, if any.
    public let subprotocol: String?
    let core: WebSocketCore

    init(core: WebSocketCore, events: WebSocketEvents, url: String, side: Side, subprotocol: String?) {
        self.core = core
        self.events = events
        self.url = url
        self.side = side
        self.subprotocol = subprotocol
    }

    deinit { core.ownerReleased() }

    public var state: WebSocketState { core.currentState }

    /// Texts `send(text:)` accepted that never went out because the connection had started
    /// closing by the time they reached the socket (at most 256), in the order sent. Only the
    /// peer (or libsoup, on an error) can close it that early: a send accepted before this side's
    /// own `close`, from whatever thread, is written ahead of the close frame. Waits for every
    /// send made before the call to reach the socket, so once the connection is closed the list
    /// is complete: a sender that reconnects sends them again.
    public func unsentTexts() async -> [String] { await core.unsentTexts() }

    public func send(text: String) throws(WebSocketError) {
        try core.send(binary: false, Array(text.utf8))
    }

    public func send(data: [UInt8]) throws(WebSocketError) {
        try core.send(binary: true, data)
    }

    public func send(data: Data) throws(WebSocketError) {
        try core.send(binary: true, [UInt8](data))
    }

    /// Starts the closing handshake. Closing a connection that is already closing or closed does
    /// nothing; `.closed` follows on `events` once the peer answered (or libsoup gave up waiting).
    public func close(code: UInt16 = 1000, reason: String = "") throws(WebSocketError) {
        guard (1000...1003).contains(code) || (1007...1014).contains(code) || (3000...4999).contains(code) else {
            throw .invalidCloseCode(code)
        }
        guard reason.utf8.count <= 123 else { throw .closeReasonTooLong(bytes: reason.utf8.count) }
        core.close(code: code, reason: reason)
    }

    /// How often libsoup sends a ping to keep middleboxes from dropping an idle connection
    /// (libsoup's `keepalive-interval`, whole seconds, rounded up); zero turns it off.
    public func setKeepaliveInterval(_ interval: Duration) {
        core.setKeepaliveInterval(interval)
    }

    /// The keep-alive interval libsoup is using now (zero when off).
    public var keepaliveInterval: Duration {
        get async { await core.keepaliveInterval }
    }
}
