import Foundation

/// A request for `HTTPClient.send`. Plain data: build it anywhere, send it from any task.
public struct HTTPRequest: Sendable, Equatable {
    public var method: String
    public var url: String
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(method: String = "GET", url: String, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    public init(method: String = "GET", url: String, headers: HTTPHeaders = [:], body: Data) {
        self.init(method: method, url: url, headers: headers, body: [UInt8](body))
    }

    public static func get(_ url: String, headers: HTTPHeaders = [:]) -> HTTPRequest {
        HTTPRequest(method: "GET", url: url, headers: headers)
    }

    /// A request whose body is `value` encoded as JSON, with `Content-Type: application/json`.
    public static func json<Body: Encodable>(_ method: String = "POST", _ url: String, body value: Body,
                                            headers: HTTPHeaders = [:],
                                            encoder: JSONEncoder = JSONEncoder()) throws(HTTPError) -> HTTPRequest {
        var request = HTTPRequest(method: method, url: url, headers: headers)
        try request.setJSONBody(value, encoder: encoder)
        return request
    }

    /// Encodes `value` as the JSON body and sets `Content-Type` unless one is already set.
    public mutating func setJSONBody<Body: Encodable>(_ value: Body, encoder: JSONEncoder = JSONEncoder()) throws(HTTPError) {
        do {
            body = [UInt8](try encoder.encode(value))
        } catch {
            throw .json(url: url, message: "cannot encode \(Body.self): \(error)")
        }
        if headers["Content-Type"] == nil { headers["Content-Type"] = "application/json" }
    }

    /// Serialises a JSON object graph (`[String: Any]`, arrays, strings, numbers) as the body.
    public mutating func setJSONObjectBody(_ object: Any) throws(HTTPError) {
        guard JSONSerialization.isValidJSONObject(object),
              // Validated just before; a failure to serialise is the same error, thrown below.
              let data = try? JSONSerialization.data(withJSONObject: object) else {
            throw .json(url: url, message: "value is not a JSON object graph")
        }
        body = [UInt8](data)
        if headers["Content-Type"] == nil { headers["Content-Type"] = "application/json" }
    }
}

/// What the server answered. Any status, including 4xx and 5xx, arrives here.
public struct HTTPResponse: Sendable, Equatable {
    public let url: String
    public let status: Int
    public let reason: String
    public let headers: HTTPHeaders
    public let body: [UInt8]

    public init(url: String, status: Int, reason: String, headers: HTTPHeaders, body: [UInt8]) {
        self.url = url
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
    }

    public var isSuccess: Bool { (200..<300).contains(status) }

    /// The body decoded as UTF-8, or nil when it is not valid UTF-8.
    public var text: String? { String(validating: body, as: UTF8.self) }

    public var data: Data { Data(body) }

    /// The body decoded as JSON into `T`.
    public func json<T: Decodable>(_ type: T.Type = T.self, decoder: JSONDecoder = JSONDecoder()) throws(HTTPError) -> T {
        do {
            return try decoder.decode(T.self, from: Data(body))
        } catch {
            throw .json(url: url, message: "cannot decode \(T.self) from the \(status) response: \(error)")
        }
    }

    /// The body parsed as a JSON object graph, for loosely typed replies.
    public func jsonObject() throws(HTTPError) -> Any {
        do {
            return try JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed])
        } catch {
            throw .json(url: url, message: "the \(status) response is not JSON: \(error.localizedDescription)")
        }
    }
}
