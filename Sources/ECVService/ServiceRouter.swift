import ECVProtocol
import Foundation
import Soup
import Synchronization

/// Maps every HTTP request to its endpoint. One catch-all route, so unknown paths and wrong
/// methods get JSON answers like everything else (libsoup's own 404/405 are plain text).
final class ServiceRouter: Sendable {
    let core: ServiceCore
    /// The URL the server is reachable at when a request carries no usable `Host` header.
    private let fallbackBase = Mutex("http://127.0.0.1")

    init(core: ServiceCore) {
        self.core = core
    }

    func setFallbackBase(_ base: String) {
        fallbackBase.withLock { $0 = base }
    }

    /// Path segments that name endpoints; the collider's HTTP side (`/<room>/<client>`) is
    /// everything else with two segments.
    private static let reservedFirstSegments: Set<String> = ["api", "agent", "join", "message", "leave", "r", "ws", "kyc"]

    func handle(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        let segments = request.path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        switch segments.first {
        case nil:
            return await only("GET", request) { self.indexPage(request) }
        case "api":
            return await api(segments, request)
        case "kyc":
            return await verification(segments, request)
        case "agent" where segments.count == 3 && segments[1] == "api":
            return await agentAPI(segments[2], request)
        case "join" where segments.count >= 2:
            return await only("POST", request) { await self.join(segments, request) }
        case "message" where segments.count >= 2:
            return await only("POST", request) { await self.message(segments, request) }
        case "leave" where segments.count >= 2:
            return await only("POST", request) { await self.leave(segments, request) }
        case "r" where segments.count == 2:
            return await only("GET", request) { await self.browserPage(room: segments[1], request) }
        case let first? where segments.count == 2 && !Self.reservedFirstSegments.contains(first):
            return await colliderHTTP(room: segments[0], client: segments[1], request)
        default:
            return notFound(request)
        }
    }

    private func api(_ segments: [String], _ request: HTTPServerRequest) async -> HTTPServerResponse {
        guard segments.count == 2 else { return notFound(request) }
        let v175 = core.configuration.backendVersion == .v1_75
        switch segments[1] {
        case "GetRtcId": return await only("POST", request) { await self.getRtcId(request) }
        case "DialEx": return await only("POST", request) { await self.dialEx(request) }
        case "Hangup": return await only("POST", request) { await self.hangup(request) }
        case "WaitForRoomInterval":
            return await only("GET", request) { await self.poll(request, endpoint: .waitForRoomInterval) }
        case "WaitForRoomQueueInterval" where v175:
            return await only("GET", request) { await self.poll(request, endpoint: .waitForRoomQueueInterval) }
        case "Queues" where v175:
            return await only("GET", request) { await self.queues(request) }
        default:
            // Includes /api/QueueSocket on v1.5 (no WebSocket endpoint is registered there) and a
            // plain GET of it on v1.75 that libsoup did not take as an upgrade.
            return notFound(request)
        }
    }

    private func agentAPI(_ name: String, _ request: HTTPServerRequest) async -> HTTPServerResponse {
        switch name {
        case "Login": await only("POST", request) { await self.agentLogin(request) }
        case "Logout": await only("POST", request) { await self.agentLogout(request) }
        default: notFound(request)
        }
    }

    // MARK: Helpers

    private func only(_ method: String, _ request: HTTPServerRequest,
                      _ body: () async -> HTTPServerResponse) async -> HTTPServerResponse {
        let received = request.method.uppercased()
        if received == method || (method == "GET" && received == "HEAD") { return await body() }
        return .ecvError(405, ServiceErrorResponse(code: "METHOD_NOT_ALLOWED",
                                                   message: "\(request.path) takes \(method), not \(request.method)"),
                         headers: ["Allow": method])
    }

    func notFound(_ request: HTTPServerRequest) -> HTTPServerResponse {
        .ecvError(404, ServiceErrorResponse(code: "NOT_FOUND", message: "no endpoint \(request.method) \(request.path)"))
    }

    /// `http(s)://<host>` for URLs handed to this request's client: the configured base, else
    /// the `Host` it used to reach us (when it looks like a host), else the bound address.
    func advertisedBase(for request: HTTPServerRequest) -> String {
        if var configured = core.configuration.advertisedBaseURL {
            while configured.hasSuffix("/") { configured.removeLast() }
            return configured
        }
        let forwardedTLS = request.remoteAddress.map(core.configuration.trustedProxies.contains) == true
            && request.headers["X-Forwarded-Proto"]?.trimmingCharacters(in: .whitespaces).lowercased() == "https"
        let scheme = core.configuration.tls == nil && !forwardedTLS ? "http" : "https"
        if let host = request.headers["Host"], Self.isPlausibleHost(host) { return "\(scheme)://\(host)" }
        return fallbackBase.withLock { $0 }
    }

    /// The client a request comes from, for per-address limits: the connection's address, or,
    /// from a trusted proxy (`trustedProxies`), the last address of its `X-Forwarded-For` (the one
    /// the proxy itself added; earlier ones are the client's say).
    func clientAddress(of request: HTTPServerRequest) -> String {
        let remote = request.remoteAddress ?? "?"
        guard core.configuration.trustedProxies.contains(remote),
              let forwarded = request.headers["X-Forwarded-For"]?.split(separator: ",").last?.trimmingCharacters(in: .whitespaces),
              !forwarded.isEmpty, forwarded.utf8.count <= 64 else { return remote }
        return forwarded
    }

    /// Letters, digits and `.-:[]` only: nothing that could break out of a URL, JSON or HTML.
    static func isPlausibleHost(_ host: String) -> Bool {
        !host.isEmpty && host.utf8.count <= 255 && host.unicodeScalars.allSatisfy {
            ($0.isASCII && CharacterSet.alphanumerics.contains($0)) || ".-:[]".unicodeScalars.contains($0)
        }
    }
}

extension HTTPServerResponse {
    /// `value` as the JSON the protocol specifies (sorted keys, unescaped slashes).
    static func ecvJSON<T: Encodable>(_ value: T, status: Int = 200, headers: HTTPHeaders = [:]) -> HTTPServerResponse {
        var all = headers
        all["Content-Type"] = "application/json"
        do {
            return HTTPServerResponse(status: status, headers: all, body: [UInt8](try ECVJSON.encode(value)))
        } catch {
            let fallback = #"{"code":"SERVICE_FAILURE","message":"cannot encode the answer"}"#
            return HTTPServerResponse(status: 500, headers: all, body: Array(fallback.utf8))
        }
    }

    static func ecvError(_ status: Int, _ body: ServiceErrorResponse, headers: HTTPHeaders = [:]) -> HTTPServerResponse {
        ecvJSON(body, status: status, headers: headers)
    }

    static func ecvError(_ error: ACDError) -> HTTPServerResponse {
        ecvError(error.httpStatus, error.response)
    }

    static func ecvError(_ rejection: ServiceRejection) -> HTTPServerResponse {
        ecvError(rejection.status, rejection.body)
    }

    /// `400 BAD_REQUEST` naming the field at fault.
    static func badRequest(_ error: ProtocolError) -> HTTPServerResponse {
        ecvError(400, ServiceErrorResponse(code: .badRequest, message: error.description, field: error.field))
    }
}
