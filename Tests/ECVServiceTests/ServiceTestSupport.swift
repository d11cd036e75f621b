import ECVProtocol
import ECVService
import Foundation
import MediaTestSupport
import Soup
import Synchronization
import Testing

struct UnexpectedFrame: Error, CustomStringConvertible {
    let description: String
}

/// One WebSocket seen from the test: frames are read strictly in order, one at a time.
final class SocketProbe: Sendable {
    let connection: WebSocketConnection

    init(_ connection: WebSocketConnection) { self.connection = connection }

    static func connect(_ url: String, headers: HTTPHeaders = [:]) async throws -> SocketProbe {
        SocketProbe(try await WebSocketClient.connect(url: url, headers: headers, connectTimeout: .seconds(5)))
    }

    /// The next event (text, binary, error or closed).
    func next(_ what: String = "the next WebSocket frame") async throws -> WebSocketEvent {
        let connection = connection
        return try await within(10, what) {
            var iterator = connection.events.makeAsyncIterator()
            guard let event = await iterator.next() else { throw UnexpectedFrame(description: "stream ended") }
            return event
        }
    }

    /// The next frame decoded as `T`; a close or anything else fails.
    func next<T: Decodable & Sendable>(_ type: T.Type) async throws -> T {
        let event = try await next("a \(T.self) frame")
        guard case .text(let text) = event else {
            throw UnexpectedFrame(description: "expected a \(T.self) frame, got \(event)")
        }
        do {
            return try ECVJSON.decode(T.self, from: text)
        } catch {
            throw UnexpectedFrame(description: "cannot decode \(T.self) from \(text): \(error)")
        }
    }

    /// The next event must be the close; returns its code.
    @discardableResult
    func nextClose() async throws -> (code: UInt16, reason: String) {
        let event = try await next("the socket to close")
        guard case .closed(let code, let reason) = event else {
            throw UnexpectedFrame(description: "expected the close, got \(event)")
        }
        return (code, reason)
    }

    func send<T: Encodable>(_ value: T) throws {
        try connection.send(text: try ECVJSON.encodeString(value))
    }

    func close() { try? connection.close() }
}

/// A running reference service with sequential ids and helpers that speak the protocol.
final class TestService: Sendable {
    let service: ReferenceService
    let base: String
    let client = HTTPClient(connectTimeout: .seconds(5), readTimeout: .seconds(10))
    /// rtcId → the caller token its DialEx answered (a transferred leg: its caller's, once `inherit`ed).
    private let callerTokens = Mutex<[String: String]>([:])

    var ws: String { ECVAPI.webSocketBase(base) }

    /// - Parameter callerTokens: false runs the service explicitly open (no caller tokens), for
    ///   tests of room mechanics that have no call behind their rooms.
    static func start(callerTokens: Bool = true,
                      _ configure: (inout ReferenceServiceConfiguration) -> Void = { _ in }) async throws -> TestService {
        var configuration = ReferenceServiceConfiguration()
        configuration.acd.identifiers = .sequential
        configuration.issuesCallerTokens = callerTokens
        configuration.openAgents = true
        configure(&configuration)
        let service = try ReferenceService(configuration: configuration)
        let url = try await service.start(host: "127.0.0.1", port: 0)
        return TestService(service: service, base: url.absoluteString)
    }

    private init(service: ReferenceService, base: String) {
        self.service = service
        self.base = base
    }

    func stop() async { await service.stop() }

    // MARK: HTTP

    func post(_ path: String, body: String = "", headers: HTTPHeaders = [:]) async throws -> HTTPResponse {
        var all = headers
        if !body.isEmpty, all["Content-Type"] == nil { all["Content-Type"] = "application/json" }
        let response = try await client.send(HTTPRequest(method: "POST", url: base + path, headers: all, body: Array(body.utf8)))
        if path == ECVAPI.dialEx, response.status == 200, let answer = try? decode(DialExResponse.self, response),
           let token = answer.callerToken {
            callerTokens.withLock { $0[answer.rtcId] = token }
        }
        return response
    }

    func post<Body: Encodable>(_ path: String, json body: Body, headers: HTTPHeaders = [:]) async throws -> HTTPResponse {
        try await post(path, body: try ECVJSON.encodeString(body), headers: headers)
    }

    func get(_ path: String, headers: HTTPHeaders = [:]) async throws -> HTTPResponse {
        try await client.get(base + path, headers: headers)
    }

    func decode<T: Decodable>(_ type: T.Type, _ response: HTTPResponse) throws -> T {
        try ECVJSON.decode(T.self, from: response.data)
    }

    /// The error body of a failed answer, checked against the expected status.
    func error(_ response: HTTPResponse, status: Int) throws -> ServiceErrorResponse {
        #expect(response.status == status, "status \(response.status): \(response.text ?? "")")
        #expect(response.headers["Content-Type"] == "application/json")
        return try ECVJSON.decode(ServiceErrorResponse.self, from: response.data)
    }

    // MARK: Caller side

    func rtcId() async throws -> String {
        try decode(GetRtcIdResponse.self, try await post(ECVAPI.getRtcId)).rtcId
    }

    /// GetRtcId + DialEx; returns the rtcId.
    func dial(_ name: String = "Jane Doe", queue: String? = nil, acd: [String: String] = [:]) async throws -> String {
        let rtcId = try await rtcId()
        let response = try await post(ECVAPI.dialEx, json: DialExRequest(rtcId: rtcId, callerName: name, queue: queue,
                                                                         acdAttributes: acd))
        #expect(response.status == 200, "DialEx: \(response.text ?? "")")
        return rtcId
    }

    /// The caller token DialEx issued for `rtcId` (or that a transferred leg inherited).
    func callerToken(_ rtcId: String) -> String? { callerTokens.withLock { $0[rtcId] } }

    /// A transfer completed: the new leg is the same caller's, with the same token.
    func inherit(_ newRtcId: String, from rtcId: String) {
        callerTokens.withLock { $0[newRtcId] = $0[rtcId] }
    }

    /// The caller's credential header for `rtcId`, when it has one.
    func callerHeaders(_ rtcId: String) -> HTTPHeaders {
        callerToken(rtcId).map { [ECVAPI.callTokenHeader: $0] } ?? [:]
    }

    func hangup(_ rtcId: String) async throws -> HTTPResponse {
        try await post(ECVAPI.hangup, json: HangupRequest(rtcId: rtcId, reason: "LOCAL_HANGUP"), headers: callerHeaders(rtcId))
    }

    func poll(_ rtcId: String, queueInfo: Bool = true) async throws -> QueueInfoResponse {
        let path = (queueInfo ? ECVAPI.waitForRoomQueueInterval : ECVAPI.waitForRoomInterval) + "?rtcId=" + rtcId
        return try decode(QueueInfoResponse.self, try await get(path, headers: callerHeaders(rtcId)))
    }

    func queueSocket(_ rtcId: String) async throws -> SocketProbe {
        try await SocketProbe.connect(ws + ECVAPI.queueSocket + "?rtcId=" + rtcId, headers: callerHeaders(rtcId))
    }

    // MARK: Agent side

    func login(_ name: String, secret: String? = nil) async throws -> AgentLoginResponse {
        let response = try await post(ECVAPI.agentLogin, json: AgentLoginRequest(name: name, secret: secret))
        #expect(response.status == 200, "Login: \(response.text ?? "")")
        return try decode(AgentLoginResponse.self, response)
    }

    /// Logs in, opens the socket, reads the greeting and, when `queues` is given, goes ready.
    func agent(_ name: String, ready queues: [String]? = ["default"]) async throws -> AgentProbe {
        let login = try await login(name)
        let socket = try await SocketProbe.connect(ws + ECVAPI.agentSocket + "?agentId=\(login.agentId)&token=\(login.token)")
        let agent = AgentProbe(id: login.agentId, token: login.token, socket: socket)
        let greeting = try await agent.next()
        #expect(greeting == .agentState(AgentStateUpdate(agentId: login.agentId, state: .notReady, queues: [])))
        if let queues {
            try agent.send(.ready(queues: queues), requestId: "ready")
            #expect(try await agent.next() == .ack(requestId: "ready"))
            #expect(try await agent.nextState().state == .ready)
        }
        return agent
    }

    // MARK: Rooms

    /// - Parameter credential: the caller token or an agent's session token (none on an open service).
    func join(_ room: String, credential: String? = nil) async throws -> JoinResponse {
        try decode(JoinResponse.self, try await post(ECVAPI.joinPath(room: room), headers: Self.credentialHeaders(credential)))
    }

    func collider(credential: String? = nil) async throws -> SocketProbe {
        try await SocketProbe.connect(ws + ECVAPI.signalingSocket, headers: Self.credentialHeaders(credential))
    }

    static func credentialHeaders(_ credential: String?) -> HTTPHeaders {
        credential.map { [ECVAPI.callTokenHeader: $0] } ?? [:]
    }
}

/// An agent's socket with its identity.
final class AgentProbe: Sendable {
    let id: String
    let token: String
    let socket: SocketProbe

    init(id: String, token: String, socket: SocketProbe) {
        self.id = id
        self.token = token
        self.socket = socket
    }

    func send(_ command: AgentCommand, requestId: String? = nil) throws {
        try socket.send(AgentRequest(command, requestId: requestId))
    }

    func next() async throws -> AgentEvent { try await socket.next(AgentEvent.self) }

    /// The next event, which must be an `agent_state`.
    func nextState() async throws -> AgentStateUpdate {
        let event = try await next()
        guard case .agentState(let update) = event else {
            throw UnexpectedFrame(description: "expected agent_state, got \(event)")
        }
        return update
    }

    /// The next event, which must be an offer.
    func nextOffer() async throws -> CallOffer {
        let event = try await next()
        guard case .offer(let offer) = event else { throw UnexpectedFrame(description: "expected an offer, got \(event)") }
        return offer
    }

    /// Sends a command with a request id and returns the answer (ack or error).
    func request(_ command: AgentCommand, id requestId: String) async throws -> AgentEvent {
        try send(command, requestId: requestId)
        return try await next()
    }
}

/// Open file descriptors of this process.
func openFileDescriptorCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
}

/// Threads of this process, from /proc/self/status.
func threadCount() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
    for line in status.split(separator: "\n") where line.hasPrefix("Threads:") {
        return Int(line.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces)) ?? -1
    }
    return -1
}

/// Waits (bounded) for a log entry whose message matches.
func waitFor(_ log: AsyncStream<ServiceLogEntry>, _ what: String, _ matches: @escaping @Sendable (String) -> Bool) async throws {
    let found = try await within(10, what) {
        for await entry in log where matches(entry.message) { return true }
        return false
    }
    if !found { throw TimedOut(what: what + " (the log ended)") }
}

extension HostileClient {
    /// Asks for a WebSocket upgrade of `path` and reads nothing, then or later: the 101 answer
    /// and everything after it stay unread, as with a client that never reads.
    func upgrade(path: String, headers: [String: String] = [:]) {
        send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
             + headers.map { "\($0.key): \($0.value)\r\n" }.joined() + "\r\n")
    }

    /// One text frame as a client sends it: masked (with a zero mask, so the payload reads as is).
    /// False when the socket did not take all of it (closed, or a send timeout passed).
    @discardableResult
    func sendFrame(_ text: String) -> Bool { sendFrame(payload: Array(text.utf8)) }

    /// One frame of `payload` with `firstByte` (FIN, RSV bits, opcode; 0xC1 is a text frame with
    /// RSV1, permessage-deflate's "compressed"), masked with a zero mask.
    @discardableResult
    func sendFrame(payload: [UInt8], firstByte: UInt8 = 0x81) -> Bool {
        let count = payload.count
        var header: [UInt8] = [firstByte]
        switch count {
        case ..<126: header.append(0x80 | UInt8(count))
        case ...0xFFFF: header += [0x80 | 126, UInt8(count >> 8), UInt8(count & 0xFF)]
        default: header += [0x80 | 127] + (0..<8).reversed().map { UInt8((count >> ($0 * 8)) & 0xFF) }
        }
        let frame = header + [0, 0, 0, 0] + payload
        return frame.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == frame.count
    }
}
