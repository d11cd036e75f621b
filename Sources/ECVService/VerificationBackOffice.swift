import ECVProtocol
import Foundation
import Synchronization

/// How the reference identity-verification back office behaves (docs/protocol.md §7).
public struct VerificationBackOfficeConfiguration: Sendable, Equatable {
    /// The integrators' API keys `Token/Create` accepts (header `X-API-Key`). Empty: no token is
    /// ever issued (the back office is closed), never an open one.
    public var apiKeys: [String]
    /// The settings per call type; `"*"` applies to call types without their own. A call type
    /// with neither gets `404 NO_SETTINGS` (`settingGetFailed`).
    public var settings: [String: VerificationSettings]
    /// How long a customer token is valid, seconds.
    public var tokenLifetime: Double
    /// Live tokens and sessions kept at most; beyond, new ones are refused with 503.
    public var maxTokens: Int
    public var maxSessions: Int
    /// Sessions one token may add (one customer's retries), so no token can fill the table.
    public var maxSessionsPerToken: Int

    public init(apiKeys: [String] = [], settings: [String: VerificationSettings] = ["*": VerificationSettings()],
                tokenLifetime: Double = 900, maxTokens: Int = 1000, maxSessions: Int = 1000, maxSessionsPerToken: Int = 8) {
        self.apiKeys = apiKeys
        self.settings = settings
        self.tokenLifetime = tokenLifetime
        self.maxTokens = maxTokens
        self.maxSessions = maxSessions
        self.maxSessionsPerToken = maxSessionsPerToken
    }
}

/// Why the back office refused a request: the HTTP status and the service's error body.
struct VerificationRefusal: Error, Sendable {
    let status: Int
    let body: ServiceErrorResponse

    init(_ status: Int, _ code: ServiceErrorCode, _ message: String, field: String? = nil) {
        self.status = status
        body = ServiceErrorResponse(code: code, message: message, field: field)
    }

    static let notYourSession = VerificationRefusal(404, "UNKNOWN_SESSION", "no such session for this token")
}

/// The back office's sessions and tokens: one state behind one lock, time from the service's clock.
/// Secrets (API keys, tokens) are never logged or echoed.
final class VerificationBackOffice: Sendable {
    struct Session {
        let id: String
        let token: String
        let request: SessionModelVideoCall
        var hearingImpaired = false
        var visuallyImpaired = false
        var rtcId: String?
        var closed = false
        var signing: (name: String, digest: String, completed: Bool)?
        var result: CallResultResponse?
    }

    private struct State {
        var tokens: [String: Double] = [:]
        var sessions: [String: Session] = [:]
        var sessionOfCall: [String: String] = [:]
        var counter = 0
    }

    let configuration: VerificationBackOfficeConfiguration
    private let clock: any ACDClock
    private let state = Mutex(State())

    init(configuration: VerificationBackOfficeConfiguration, clock: any ACDClock) {
        self.configuration = configuration
        self.clock = clock
    }

    private static func randomToken() -> String {
        (0..<24).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    func createToken(apiKey: String?) throws(VerificationRefusal) -> TokenCreateResponse {
        guard let apiKey, !apiKey.isEmpty else { throw VerificationRefusal(401, .unauthorized, "\(VerificationAPI.apiKeyHeader) is missing") }
        guard constantTimeContains(configuration.apiKeys, apiKey) else { throw VerificationRefusal(403, .forbidden, "the API key is not accepted") }
        let now = clock.now()
        let token = Self.randomToken()
        let admitted = state.withLock { state -> Bool in
            state.tokens = state.tokens.filter { $0.value > now }
            guard state.tokens.count < configuration.maxTokens else { return false }
            state.tokens[token] = now + configuration.tokenLifetime
            return true
        }
        guard admitted else { throw VerificationRefusal(503, .serviceUnavailable, "too many live tokens; try again later") }
        return TokenCreateResponse(token: token, expiresInSeconds: Int(configuration.tokenLifetime))
    }

    /// The token, when it is live; else the refusal.
    func authenticate(_ token: String?) throws(VerificationRefusal) -> String {
        guard let token else { throw VerificationRefusal(401, .unauthorized, "Authorization: Bearer <token> from Token/Create is missing") }
        let now = clock.now()
        let live = state.withLock { ($0.tokens[token] ?? 0) > now }
        guard live else { throw VerificationRefusal(401, .unauthorized, "the token is unknown or expired") }
        return token
    }

    func addSession(_ request: SessionModelVideoCall, token: String) throws(VerificationRefusal) -> SessionAddResponse {
        for (name, value) in request.textFields {
            guard let value else { continue }
            if value.count > VerificationAPI.maxFieldLength || value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                throw VerificationRefusal(400, .badRequest, "\(name) must be at most \(VerificationAPI.maxFieldLength) characters without control characters", field: name)
            }
        }
        if let number = request.identityNo, !number.isEmpty, !(number.count <= 32 && number.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }) {
            throw VerificationRefusal(400, .badRequest, "identityNo must be 1-32 ASCII letters or digits", field: "identityNo")
        }
        let now = clock.now()
        return try state.withLock { state throws(VerificationRefusal) in
            // A session lives as long as its token (nothing can reach it without the token).
            let tokens = state.tokens
            state.sessions = state.sessions.filter { (tokens[$0.value.token] ?? 0) > now }
            let sessions = state.sessions
            state.sessionOfCall = state.sessionOfCall.filter { sessions[$0.value] != nil }
            guard state.sessions.count < configuration.maxSessions else {
                throw VerificationRefusal(503, .serviceUnavailable, "too many open sessions; try again later")
            }
            guard state.sessions.values.filter({ $0.token == token }).count < configuration.maxSessionsPerToken else {
                throw VerificationRefusal(429, "TOO_MANY_SESSIONS", "this token added \(configuration.maxSessionsPerToken) sessions already")
            }
            state.counter += 1
            let id = "kyc-\(state.counter)-\(Self.randomToken().prefix(8))"
            var session = Session(id: id, token: token, request: request)
            session.hearingImpaired = request.handicapped ?? false
            state.sessions[id] = session
            return SessionAddResponse(sessionId: id)
        }
    }

    /// Runs `change` on the token's open session.
    func withSession<T>(_ id: String, token: String, allowClosed: Bool = false,
                        _ change: (inout Session) throws(VerificationRefusal) -> T) throws(VerificationRefusal) -> T {
        try state.withLock { state throws(VerificationRefusal) in
            guard var session = state.sessions[id], session.token == token else { throw .notYourSession }
            if session.closed && !allowClosed { throw VerificationRefusal(409, .invalidState, "the session is closed") }
            let value = try change(&session)
            state.sessions[id] = session
            if let rtcId = session.rtcId { state.sessionOfCall[rtcId] = id }
            return value
        }
    }

    func settings(forSession id: String, token: String) throws(VerificationRefusal) -> VerificationSettings {
        let callType = try withSession(id, token: token) { $0.request.callType }
        guard let settings = configuration.settings[callType] ?? configuration.settings["*"] else {
            throw VerificationRefusal(404, "NO_SETTINGS", "the back office has no settings for call type \"\(callType.prefix(64))\"")
        }
        return settings
    }

    /// The verdict on a call, posted by the agent connected to it (the endpoint checked that).
    func postResult(_ post: CallResultPost) throws(VerificationRefusal) {
        guard (1...32).contains(post.result.count), post.result.allSatisfy({ ("A"..."Z").contains($0) || $0 == "_" }) else {
            throw VerificationRefusal(400, .badRequest, "result must be 1-32 of [A-Z_]", field: "result")
        }
        guard post.description.count <= VerificationAPI.maxFieldLength else {
            throw VerificationRefusal(400, .badRequest, "description must be at most \(VerificationAPI.maxFieldLength) characters", field: "description")
        }
        try state.withLock { state throws(VerificationRefusal) in
            guard let id = state.sessionOfCall[post.rtcId], var session = state.sessions[id] else {
                throw VerificationRefusal(404, "UNKNOWN_SESSION", "no verification session is linked to call \(post.rtcId)")
            }
            session.result = CallResultResponse(result: post.result, description: post.description, reference: session.request.reference)
            state.sessions[id] = session
        }
    }

    /// A DialEx for a verification call: its accessibility flags are the session's, whatever the
    /// customer's SDK put in; a DialEx naming a session the back office does not know carries none.
    func withSessionPriority(_ dial: DialExRequest) -> DialExRequest {
        guard let id = dial.acdAttributes[VerificationAPI.sessionAttribute] else { return dial }
        var dial = dial
        let flags = state.withLock { state -> (Bool, Bool)? in
            guard let session = state.sessions[id], !session.closed, session.rtcId == nil || session.rtcId == dial.rtcId else { return nil }
            return (session.hearingImpaired, session.visuallyImpaired)
        }
        dial.acdAttributes[ACDAttributeKey.hearingImpaired] = flags.map { $0.0 ? "true" : "false" }
        dial.acdAttributes[ACDAttributeKey.visuallyImpaired] = flags.map { $0.1 ? "true" : "false" }
        return dial
    }

    /// The number of open sessions (tests, diagnostics).
    var openSessionCount: Int { state.withLock { $0.sessions.values.filter { !$0.closed }.count } }
}
