import ECVProtocol
import GLibCore
import Soup

/// Joining a room: `POST /join/<room>`, retried within the reconnect window (docs/protocol.md §9).
extension RoomSignaling {
    /// `POST /join/<room>` with the configured headers and timeouts, retried within the window.
    ///
    /// With a credential the join is safe to retry: the service gives a party that already holds
    /// a slot that same slot again (docs/protocol.md §9), so a join whose answer was lost does
    /// not take a second one. Without a credential only failures that never reached the service
    /// are retried.
    package func join() async throws(RoomSignalingError) -> JoinParameters {
        let idempotent = !(options.credential ?? "").isEmpty
        do {
            return try await retrying(within: options.reconnectWindow, isTransient: { (error: RoomSignalingError) in
                switch error {
                case .transport(_, let failure): idempotent ? failure.isTransient : failure.neverReachedServer
                case .joinStatus(_, let status): idempotent && [502, 503, 504].contains(status)
                default: false
                }
            }) { () async throws(RoomSignalingError) in try await joinOnce() }
        } catch {
            guard error.attempts > 1 else { throw error.last }
            throw .join(url: ECVAPI.url(base: options.webrtcUrl, path: ECVAPI.joinPath(room: room)),
                        reason: "\(error.last) (gave up after \(error.attempts) attempts)")
        }
    }

    private func joinOnce() async throws(RoomSignalingError) -> JoinParameters {
        let url = ECVAPI.url(base: options.webrtcUrl, path: ECVAPI.joinPath(room: room))
        let response: HTTPResponse
        do {
            response = try await http.send(HTTPRequest(method: "POST", url: url, headers: requestHeaders))
        } catch {
            throw .transport(url: url, error)
        }
        guard response.isSuccess else { throw .joinStatus(url: url, response.status) }
        let answer: JoinResponse
        do { answer = try ECVJSON.decode(JoinResponse.self, from: response.data) } catch {
            throw .join(url: url, reason: "unexpected answer: \(error)")
        }
        switch answer.result {
        case .success:
            guard let parameters = answer.params else { throw .join(url: url, reason: "SUCCESS without params") }
            state.withLock { $0.joined = parameters }
            return parameters
        case .full:
            throw .roomFull(room: room)
        default:
            throw .join(url: url, reason: "result \(answer.result.rawValue)")
        }
    }
}
