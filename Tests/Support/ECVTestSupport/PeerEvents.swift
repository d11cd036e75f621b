import ECVPeer
import GLibCore
import MediaTestSupport

/// Everything a stream delivered so far, and waiting for what is to come.
package final class Events<Event: Sendable>: Sendable {
    private let seen = Locked<[Event]>([])
    private let task: Task<Void, Never>

    package init(_ stream: AsyncStream<Event>) {
        let seen = self.seen
        task = Task { for await event in stream { seen.withLock { $0.append(event) } } }
    }

    deinit { task.cancel() }

    package var all: [Event] { seen.withLock { $0 } }

    /// The first event matching `match`, waiting up to `timeout` for it.
    @discardableResult
    package func first(_ what: String, timeout: Duration = .seconds(20), _ match: @escaping @Sendable (Event) -> Bool) async throws -> Event {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let found = seen.withLock({ $0.first(where: match) }) { return found }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestFailure("no \(what) within \(timeout); saw \(all)")
    }
}

extension PeerEvent {
    package var call: MediaConnection? { if case .call(let connection) = self { connection } else { nil } }
    package var dataConnection: DataConnection? { if case .connection(let connection) = self { connection } else { nil } }
    package var error: PeerError? { if case .error(let error) = self { error } else { nil } }
}

extension MediaConnectionEvent {
    package var stream: MediaStream? { if case .stream(let stream) = self { stream } else { nil } }
    package var isClose: Bool { if case .close = self { true } else { false } }
    package var error: PeerError? { if case .error(let error) = self { error } else { nil } }
}
