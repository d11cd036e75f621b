import ECVProtocol
import Foundation
import GLibCore
import Soup

/// Why a REST call to the ECV service failed.
enum ServiceCallError: Error, Sendable, CustomStringConvertible {
    case transport(HTTPError)
    case status(Int, ServiceErrorResponse?)
    case decoding(url: String, ProtocolError)
    /// Retried within the reconnect window and still failing: the last failure.
    indirect case gaveUp(ServiceCallError, attempts: Int)

    var description: String {
        switch self {
        case .gaveUp(let last, let attempts): "\(last) (gave up after \(attempts) attempts)"
        case .transport(let error): error.description
        case .status(let status, let body):
            "HTTP \(status)" + (body.map { ": \($0.code.rawValue) \($0.message)" } ?? "")
        case .decoding(let url, let error): "unexpected answer from \(url): \(error)"
        }
    }

    var serviceCode: String? {
        switch self {
        case .status(_, let body?): body.code.rawValue
        case .gaveUp(let last, _): last.serviceCode
        default: nil
        }
    }

    /// Whether the same request may succeed later: a transport failure that can pass (refused,
    /// timed out, reset) or a 502/503/504 from a proxy or an overloaded service.
    /// - Parameter idempotent: false for a request whose repetition would do something twice:
    ///   then only failures that prove the request never reached the service count.
    func isTransient(idempotent: Bool) -> Bool {
        switch self {
        case .transport(let error): idempotent ? error.isTransient : error.neverReachedServer
        case .status(let status, _): idempotent && [502, 503, 504].contains(status)
        case .decoding, .gaveUp: false
        }
    }
}

/// The ECV REST endpoints (docs/protocol.md §1), on one HTTP client per SDK instance.
final class ServiceClient: Sendable {
    let configuration: ECVSdkConfiguration
    let http: HTTPClient
    /// How long a failed request is retried (`reconnectWindowMs`).
    let retryWindow: Duration

    init(configuration: ECVSdkConfiguration, tls: TLSSettings) {
        self.configuration = configuration
        let timeout = Duration.milliseconds(max(1, configuration.httpTimeoutMs))
        http = tls.httpClient(connectTimeout: timeout, readTimeout: timeout, userAgent: "ECVKit", signaling: false)
        retryWindow = .milliseconds(max(0, configuration.reconnectWindowMs))
    }

    private func url(_ path: String) -> String { ECVAPI.url(base: configuration.serviceUrl, path: path) }

    /// Retried like an idempotent request: an answer that was lost leaves one unused rtcId on the
    /// service (it only counts toward the service's limit of undialed rtcIds), never a call.
    func getRtcId() async throws(ServiceCallError) -> String {
        try await call(HTTPRequest(method: "POST", url: url(ECVAPI.getRtcId)), as: GetRtcIdResponse.self, idempotent: true).0.rtcId
    }

    /// DialEx; returns the typed answer and the raw body (the call's `dialResponse`).
    ///
    /// Safe to retry: every attempt carries the same `Idempotency-Key`, and the service answers a
    /// repeated key with the first attempt's answer, so a DialEx whose answer was lost on the way
    /// back never creates a second call nor fails as `ALREADY_DIALED`.
    func dial(_ request: DialExRequest, headers: [String: String]) async throws(ServiceCallError)
        -> (DialExResponse, [String: any Sendable]) {
        let body: Data
        do { body = try ECVJSON.encode(request) } catch { throw .decoding(url: url(ECVAPI.dialEx), error) }
        var httpRequest = HTTPRequest(method: "POST", url: url(ECVAPI.dialEx), headers: HTTPHeaders(headers), body: body)
        httpRequest.headers["Content-Type"] = "application/json"
        httpRequest.headers[ECVAPI.idempotencyKeyHeader] = UUID().uuidString
        return try await call(httpRequest, as: DialExResponse.self, idempotent: true)
    }

    /// Safe to retry: the service's Hangup is idempotent (an ended call stays ended).
    /// - Parameters:
    ///   - callerToken: the call's token from DialEx, sent when the service issued one.
    ///   - retryWindow: how long to keep trying (nil: `reconnectWindowMs`); an end that does not
    ///     wait for the service gives less.
    func hangup(rtcId: String, reason: String, callerToken: String?, retryWindow: Duration? = nil) async throws(ServiceCallError) {
        let body: Data
        do { body = try ECVJSON.encode(HangupRequest(rtcId: rtcId, reason: reason)) } catch { throw .decoding(url: url(ECVAPI.hangup), error) }
        var request = HTTPRequest(method: "POST", url: url(ECVAPI.hangup), headers: Self.credentialHeaders(callerToken), body: body)
        request.headers["Content-Type"] = "application/json"
        _ = try await call(request, as: HangupResponse.self, idempotent: true, window: retryWindow)
    }

    /// One poll of a `WaitForRoom…` endpoint given as a prefix ending with the query key. A GET
    /// that changes nothing: safe to retry (within one polling interval, so polls do not pile up).
    func poll(prefix: String, rtcId: String, callerToken: String?, retryWindow: Duration) async throws(ServiceCallError)
        -> QueueInfoResponse {
        try await call(.get(ECVAPI.appendingRtcId(rtcId, to: prefix), headers: Self.credentialHeaders(callerToken)),
                       as: QueueInfoResponse.self, idempotent: true, window: min(retryWindow, self.retryWindow)).0
    }

    /// The `X-ECV-Token` header for a call credential (docs/protocol.md §1.9); none without one.
    static func credentialHeaders(_ token: String?) -> HTTPHeaders {
        guard let token, !token.isEmpty else { return [:] }
        return [ECVAPI.callTokenHeader: token]
    }

    /// `attempt`, retried within `window` (nil: `retryWindow`) while its failure is transient.
    private func call<T: Decodable & Sendable>(_ request: HTTPRequest, as type: T.Type, idempotent: Bool, window: Duration? = nil)
        async throws(ServiceCallError) -> (T, [String: any Sendable]) {
        do {
            return try await retrying(within: window ?? retryWindow, isTransient: { $0.isTransient(idempotent: idempotent) },
                                      onRetry: { failure, attempt, delay in
                                          Logger.info("\(request.method) \(request.url) failed (\(failure)); retry \(attempt) in \(delay)")
                                      }) { () async throws(ServiceCallError) in
                try await attempt(request, as: type)
            }
        } catch {
            throw error.attempts > 1 ? .gaveUp(error.last, attempts: error.attempts) : error.last
        }
    }

    private func attempt<T: Decodable & Sendable>(_ request: HTTPRequest, as type: T.Type) async throws(ServiceCallError) -> (T, [String: any Sendable]) {
        let response: HTTPResponse
        do { response = try await http.send(request) } catch { throw .transport(error) }
        guard response.isSuccess else {
            // An error body that is not the service's JSON still leaves the status to report.
            throw .status(response.status, try? ECVJSON.decode(ServiceErrorResponse.self, from: response.data))
        }
        do {
            let value = try ECVJSON.decode(T.self, from: response.data)
            return (value, JSONObject.sendable(from: response.data))
        } catch {
            throw .decoding(url: request.url, error)
        }
    }
}

/// JSON objects as Sendable Swift values (`[String: any Sendable]`, what `dialResponse` holds):
/// strings, `Int` or `Double` numbers, `Bool`, arrays and nested objects; `null` is dropped.
enum JSONObject {
    static func sendable(from data: Data) -> [String: any Sendable] {
        // The raw fields are extras for apps (objData): a body that is not an object has none.
        guard case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: data) else { return [:] }
        return object.compactMapValues(\.sendable)
    }

    private enum JSONValue: Decodable {
        case string(String), int(Int), double(Double), bool(Bool), array([JSONValue]), object([String: JSONValue]), null

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            // Each form is tried in turn (a mismatch is no error yet); the object form's failure is the error.
            func attempt<T: Decodable>(_ type: T.Type) -> T? { try? container.decode(type) }
            if container.decodeNil() { self = .null }
            else if let value = attempt(Bool.self) { self = .bool(value) }
            else if let value = attempt(Int.self) { self = .int(value) }
            else if let value = attempt(Double.self) { self = .double(value) }
            else if let value = attempt(String.self) { self = .string(value) }
            else if let value = attempt([JSONValue].self) { self = .array(value) }
            else { self = .object(try container.decode([String: JSONValue].self)) }
        }

        var sendable: (any Sendable)? {
            switch self {
            case .string(let value): value
            case .int(let value): value
            case .double(let value): value
            case .bool(let value): value
            case .array(let values): values.compactMap(\.sendable)
            case .object(let object): object.compactMapValues(\.sendable)
            case .null: nil
            }
        }
    }
}
