import ECV
import ECVProtocol
import Foundation

/// Why a back-office request failed, as the app is told (`lastError`, the delegate's texts).
struct BackOfficeFailure: Error, Sendable, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// The back office's REST API (docs/protocol.md §7) on the SDK's pinned API client: every request
/// goes out only to a server whose certificate matches the MAPI pins (when there are any).
struct BackOfficeClient: Sendable {
    let sdk: ECVSdk
    let baseURL: String

    private func url(_ path: String, query: String? = nil) -> String {
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        return base + path + (query.map { "?" + $0 } ?? "")
    }

    func send<Response: Decodable>(_ method: String, _ path: String, query: String? = nil, token: String? = nil,
                                   headers: [String: String] = [:], body: (some Encodable)?, as type: Response.Type)
        async throws(BackOfficeFailure) -> Response {
        var all = headers
        if let token { all["Authorization"] = "Bearer \(token)" }
        var data: Data?
        if let body {
            do { data = try ECVJSON.encode(body) } catch { throw BackOfficeFailure(message: "cannot encode the request: \(error)") }
        }
        let target = url(path, query: query)
        let response: PinnedExchangeResponse
        do { response = try await sdk.pinnedExchange(method: method, url: target, headers: all, body: data) } catch {
            throw BackOfficeFailure(message: error.pinMismatch
                ? "the back office's certificate matches none of the MAPI certificates: \(error.message)" : error.message)
        }
        guard response.isSuccess else {
            // A body that is not the service's JSON error still leaves the status to report.
            let reason = (try? ECVJSON.decode(ServiceErrorResponse.self, from: response.body)).map { "\($0.code.rawValue): \($0.message)" }
            throw BackOfficeFailure(message: "\(path) → HTTP \(response.status)" + (reason.map { " \($0)" } ?? ""))
        }
        do { return try ECVJSON.decode(Response.self, from: response.body) } catch {
            throw BackOfficeFailure(message: "unexpected answer from \(path): \(error)")
        }
    }

    func get<Response: Decodable>(_ path: String, query: String, token: String, as type: Response.Type) async throws(BackOfficeFailure) -> Response {
        try await send("GET", path, query: query, token: token, body: Optional<SessionReference>.none, as: type)
    }

    static func query(sessionId: String) -> String {
        VerificationAPI.sessionIdQueryName + "=" + (sessionId.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? sessionId)
    }
}
