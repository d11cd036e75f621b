import Foundation

/// A request as an `HTTPServer` handler sees it (for WebSocket handlers: the upgrade request).
public struct HTTPServerRequest: Sendable {
    public let method: String
    /// The decoded path, without the query.
    public let path: String
    /// Decoded query items in the order they appeared.
    public let query: [URLQueryItem]
    public let headers: HTTPHeaders
    public let body: [UInt8]
    /// "host:port" of the peer, when known.
    public let remoteAddress: String?

    public init(method: String, path: String, query: [URLQueryItem] = [], headers: HTTPHeaders = [:],
                body: [UInt8] = [], remoteAddress: String? = nil) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
    }

    /// The first value of query item `name`.
    public func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }

    /// The body decoded as UTF-8, or nil when it is not valid UTF-8.
    public var text: String? { String(validating: body, as: UTF8.self) }

    /// The body decoded as JSON into `T`.
    public func json<T: Decodable>(_ type: T.Type = T.self, decoder: JSONDecoder = JSONDecoder()) throws -> T {
        try decoder.decode(T.self, from: Data(body))
    }

    /// The path after `prefix`, split into segments ("/join/room1/x" after "/join" → ["room1", "x"]).
    public func pathSegments(after prefix: String) -> [String] {
        guard path.hasPrefix(prefix) else { return [] }
        return path.dropFirst(prefix.count).split(separator: "/").map(String.init)
    }
}

/// What a handler answers.
public struct HTTPServerResponse: Sendable, Equatable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(status: Int = 200, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A UTF-8 text response.
    public static func text(_ text: String, status: Int = 200, headers: HTTPHeaders = [:]) -> HTTPServerResponse {
        var all = headers
        if all["Content-Type"] == nil { all["Content-Type"] = "text/plain; charset=utf-8" }
        return HTTPServerResponse(status: status, headers: all, body: Array(text.utf8))
    }

    /// `value` encoded as JSON.
    public static func json<T: Encodable>(_ value: T, status: Int = 200, headers: HTTPHeaders = [:],
                                          encoder: JSONEncoder = JSONEncoder()) throws -> HTTPServerResponse {
        jsonData(try encoder.encode(value), status: status, headers: headers)
    }

    /// A JSON object graph (`[String: Any]`, arrays, strings, numbers) serialised.
    public static func jsonObject(_ object: Any, status: Int = 200, headers: HTTPHeaders = [:]) throws -> HTTPServerResponse {
        jsonData(try JSONSerialization.data(withJSONObject: object, options: [.fragmentsAllowed]), status: status, headers: headers)
    }

    private static func jsonData(_ data: Data, status: Int, headers: HTTPHeaders) -> HTTPServerResponse {
        var all = headers
        if all["Content-Type"] == nil { all["Content-Type"] = "application/json" }
        return HTTPServerResponse(status: status, headers: all, body: [UInt8](data))
    }

    public static func status(_ status: Int) -> HTTPServerResponse { HTTPServerResponse(status: status) }

    public static var notFound: HTTPServerResponse { .text("not found", status: 404) }
}

/// Why an `HTTPServer` could not start.
public enum HTTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidAddress(String)
    case listenFailed(host: String, port: UInt16, message: String)
    case alreadyListening(port: UInt16)
    case stopped

    public var description: String {
        switch self {
        case .invalidAddress(let host): "\"\(host)\" is not an IP address to listen on"
        case .listenFailed(let host, let port, let message): "cannot listen on \(host):\(port): \(message)"
        case .alreadyListening(let port): "the server is already listening on port \(port)"
        case .stopped: "the server was stopped and cannot listen again"
        }
    }
}
