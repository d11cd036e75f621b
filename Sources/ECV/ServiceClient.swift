import ECVProtocol
import Foundation
import Soup

/// Why a REST call to the ECV service failed.
enum ServiceCallError: Error, Sendable, CustomStringConvertible {
    case transport(HTTPError)
    case status(Int, ServiceErrorResponse?)
    case decoding(url: String, ProtocolError)

    var description: String {
        switch self {
        case .transport(let error): error.description
        case .status(let status, let body):
            "HTTP \(status)" + (body.map { ": \($0.code.rawValue) \($0.message)" } ?? "")
        case .decoding(let url, let error): "unexpected answer from \(url): \(error)"
        }
    }

    var serviceCode: String? { if case .status(_, let body?) = self { body.code.rawValue } else { nil } }
}

/// The ECV REST endpoints (docs/protocol.md §1), on one HTTP client per SDK instance.
final class ServiceClient: Sendable {
    let configuration: ECVSdkConfiguration
    let http: HTTPClient

    init(configuration: ECVSdkConfiguration, tls: TLSSettings) {
        self.configuration = configuration
        let timeout = Duration.milliseconds(max(1, configuration.httpTimeoutMs))
        http = tls.httpClient(connectTimeout: timeout, readTimeout: timeout, userAgent: "ECVKit", signaling: false)
    }

    private func url(_ path: String) -> String { ECVAPI.url(base: configuration.serviceUrl, path: path) }

    func getRtcId() async throws(ServiceCallError) -> String {
        try await call(HTTPRequest(method: "POST", url: url(ECVAPI.getRtcId)), as: GetRtcIdResponse.self).0.rtcId
    }

    /// DialEx; returns the typed answer and the raw body (the call's `dialResponse`).
    func dial(_ request: DialExRequest, headers: [String: String]) async throws(ServiceCallError)
        -> (DialExResponse, [String: any Sendable]) {
        let body: Data
        do { body = try ECVJSON.encode(request) } catch { throw .decoding(url: url(ECVAPI.dialEx), error) }
        var httpRequest = HTTPRequest(method: "POST", url: url(ECVAPI.dialEx), headers: HTTPHeaders(headers), body: body)
        httpRequest.headers["Content-Type"] = "application/json"
        return try await call(httpRequest, as: DialExResponse.self)
    }

    /// - Parameter callerToken: the call's token from DialEx, sent when the service issued one.
    func hangup(rtcId: String, reason: String, callerToken: String?) async throws(ServiceCallError) {
        let body: Data
        do { body = try ECVJSON.encode(HangupRequest(rtcId: rtcId, reason: reason)) } catch { throw .decoding(url: url(ECVAPI.hangup), error) }
        var request = HTTPRequest(method: "POST", url: url(ECVAPI.hangup), headers: Self.credentialHeaders(callerToken), body: body)
        request.headers["Content-Type"] = "application/json"
        _ = try await call(request, as: HangupResponse.self)
    }

    /// One poll of a `WaitForRoom…` endpoint given as a prefix ending with the query key.
    func poll(prefix: String, rtcId: String, callerToken: String?) async throws(ServiceCallError) -> QueueInfoResponse {
        try await call(.get(ECVAPI.appendingRtcId(rtcId, to: prefix), headers: Self.credentialHeaders(callerToken)),
                       as: QueueInfoResponse.self).0
    }

    /// The `X-ECV-Token` header for a call credential (docs/protocol.md §1.9); none without one.
    static func credentialHeaders(_ token: String?) -> HTTPHeaders {
        guard let token, !token.isEmpty else { return [:] }
        return [ECVAPI.callTokenHeader: token]
    }

    private func call<T: Decodable>(_ request: HTTPRequest, as type: T.Type) async throws(ServiceCallError) -> (T, [String: any Sendable]) {
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
