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
    /// The API key is in every app, so anyone can ask for tokens: one client address may create
    /// this many a minute (`429` beyond, `Retry-After: 60`), and hold at most `maxTokensPerAddress`
    /// live tokens and `maxSessionsPerAddress` open sessions (`429`), a bounded share of the tables.
    public var maxTokensPerAddressPerMinute: Int
    public var maxTokensPerAddress: Int
    public var maxSessionsPerAddress: Int
    /// `Session/Add` requests one client address may make a minute (`429` beyond).
    public var maxSessionsPerAddressPerMinute: Int

    public init(apiKeys: [String] = [], settings: [String: VerificationSettings] = ["*": VerificationSettings()],
                tokenLifetime: Double = 900, maxTokens: Int = 1000, maxSessions: Int = 1000, maxSessionsPerToken: Int = 8,
                maxTokensPerAddressPerMinute: Int = 30, maxTokensPerAddress: Int = 50, maxSessionsPerAddress: Int = 100,
                maxSessionsPerAddressPerMinute: Int = 60) {
        self.apiKeys = apiKeys
        self.settings = settings
        self.tokenLifetime = tokenLifetime
        self.maxTokens = maxTokens
        self.maxSessions = maxSessions
        self.maxSessionsPerToken = maxSessionsPerToken
        self.maxTokensPerAddressPerMinute = maxTokensPerAddressPerMinute
        self.maxTokensPerAddress = maxTokensPerAddress
        self.maxSessionsPerAddress = maxSessionsPerAddress
        self.maxSessionsPerAddressPerMinute = maxSessionsPerAddressPerMinute
    }
}

/// Why the back office refused a request: the HTTP status and the service's error body.
struct VerificationRefusal: Error, Sendable {
    let status: Int
    let body: ServiceErrorResponse
    /// Seconds for a `Retry-After` header (a rate limit).
    var retryAfter: Int?

    init(_ status: Int, _ code: ServiceErrorCode, _ message: String, field: String? = nil, retryAfter: Int? = nil) {
        self.status = status
        body = ServiceErrorResponse(code: code, message: message, field: field)
        self.retryAfter = retryAfter
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

    private struct Token {
        let expires: Double
        /// The client address that created it, whose share of the tables it counts in.
        let address: String
    }

    private struct State {
        var tokens: [String: Token] = [:]
        var sessions: [String: Session] = [:]
        var sessionOfCall: [String: String] = [:]
        var counter = 0
    }

    let configuration: VerificationBackOfficeConfiguration
    private let clock: any ACDClock
    private let state = Mutex(State())
    private let tokenQuota: AddressQuota
    private let sessionQuota: AddressQuota

    init(configuration: VerificationBackOfficeConfiguration, clock: any ACDClock) {
        self.configuration = configuration
        self.clock = clock
        tokenQuota = AddressQuota(limit: configuration.maxTokensPerAddressPerMinute, clock: clock)
        sessionQuota = AddressQuota(limit: configuration.maxSessionsPerAddressPerMinute, clock: clock)
    }

    private static func randomToken() -> String {
        (0..<24).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    /// - Parameter address: the client's address (`ServiceRouter.clientAddress`), for its share.
    func createToken(apiKey: String?, address: String) throws(VerificationRefusal) -> TokenCreateResponse {
        guard let apiKey, !apiKey.isEmpty else { throw VerificationRefusal(401, .unauthorized, "\(VerificationAPI.apiKeyHeader) is missing") }
        guard constantTimeContains(configuration.apiKeys, apiKey) else { throw VerificationRefusal(403, .forbidden, "the API key is not accepted") }
        guard tokenQuota.admit(address) else {
            throw VerificationRefusal(429, "TOO_MANY_REQUESTS", "too many tokens created from this address; try again in a minute",
                                      retryAfter: 60)
        }
        let now = clock.now()
        let token = Self.randomToken()
        try state.withLock { state throws(VerificationRefusal) in
            state.tokens = state.tokens.filter { $0.value.expires > now }
            guard state.tokens.values.filter({ $0.address == address }).count < configuration.maxTokensPerAddress else {
                throw VerificationRefusal(429, "TOO_MANY_REQUESTS", "this address holds \(configuration.maxTokensPerAddress) live tokens; "
                    + "try again when one expires", retryAfter: 60)
            }
            guard state.tokens.count < configuration.maxTokens else {
                throw VerificationRefusal(503, .serviceUnavailable, "too many live tokens; try again later")
            }
            state.tokens[token] = Token(expires: now + configuration.tokenLifetime, address: address)
        }
        return TokenCreateResponse(token: token, expiresInSeconds: Int(configuration.tokenLifetime))
    }

    /// The token, when it is live; else the refusal.
    func authenticate(_ token: String?) throws(VerificationRefusal) -> String {
        guard let token else { throw VerificationRefusal(401, .unauthorized, "Authorization: Bearer <token> from Token/Create is missing") }
        let now = clock.now()
        let live = state.withLock { ($0.tokens[token]?.expires ?? 0) > now }
        guard live else { throw VerificationRefusal(401, .unauthorized, "the token is unknown or expired") }
        return token
    }

    /// - Parameter address: the client's address, for its rate (its share counts by the token's).
    func addSession(_ request: SessionModelVideoCall, token: String, address: String) throws(VerificationRefusal) -> SessionAddResponse {
        guard sessionQuota.admit(address) else {
            throw VerificationRefusal(429, "TOO_MANY_REQUESTS", "too many sessions added from this address; try again in a minute",
                                      retryAfter: 60)
        }
        for (name, value) in request.textFields {
            guard let value, let problem = ServiceLimits.lineTextProblem(value, maxBytes: VerificationAPI.maxFieldLength) else { continue }
            throw VerificationRefusal(400, .badRequest, "\(name) \(problem)", field: name)
        }
        if let number = request.identityNo, !number.isEmpty, !(number.count <= 32 && number.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }) {
            throw VerificationRefusal(400, .badRequest, "identityNo must be 1-32 ASCII letters or digits", field: "identityNo")
        }
        let now = clock.now()
        return try state.withLock { state throws(VerificationRefusal) in
            // A session lives as long as its token (nothing can reach it without the token).
            let tokens = state.tokens
            state.sessions = state.sessions.filter { (tokens[$0.value.token]?.expires ?? 0) > now }
            let sessions = state.sessions
            state.sessionOfCall = state.sessionOfCall.filter { sessions[$0.value] != nil }
            guard state.sessions.count < configuration.maxSessions else {
                throw VerificationRefusal(503, .serviceUnavailable, "too many open sessions; try again later")
            }
            guard state.sessions.values.filter({ $0.token == token }).count < configuration.maxSessionsPerToken else {
                throw VerificationRefusal(429, "TOO_MANY_SESSIONS", "this token added \(configuration.maxSessionsPerToken) sessions already")
            }
            let address = tokens[token]?.address
            guard state.sessions.values.filter({ tokens[$0.token]?.address == address }).count < configuration.maxSessionsPerAddress else {
                throw VerificationRefusal(429, "TOO_MANY_SESSIONS", "this address holds \(configuration.maxSessionsPerAddress) open sessions")
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
            return value
        }
    }

    /// Makes `rtcId` the call of the token's session (the endpoint checked the caller's
    /// credential). A session has one call and a call one session: a session linked to another
    /// call, or a call linked to another session, is `409`; linking the same pair again is OK.
    /// `follow` gives the call the session's accessibility flags, under this lock (as a
    /// `Session/Update` does in `withSession`), so the last flags set are the call's.
    func link(sessionId id: String, rtcId: String, token: String, follow: (SessionUpdateRequest) -> Void) throws(VerificationRefusal) {
        try state.withLock { state throws(VerificationRefusal) in
            guard var session = state.sessions[id], session.token == token else { throw .notYourSession }
            if session.closed { throw VerificationRefusal(409, .invalidState, "the session is closed") }
            if let linked = session.rtcId, linked != rtcId {
                throw VerificationRefusal(409, .invalidState, "the session is already linked to another call")
            }
            if let owner = state.sessionOfCall[rtcId], owner != id, state.sessions[owner] != nil {
                throw VerificationRefusal(409, .invalidState, "call \(rtcId) is already linked to another session")
            }
            session.rtcId = rtcId
            state.sessions[id] = session
            state.sessionOfCall[rtcId] = id
            follow(SessionUpdateRequest(sessionId: id, hearingImpaired: session.hearingImpaired, visuallyImpaired: session.visuallyImpaired))
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
        if let problem = ServiceLimits.lineTextProblem(post.description, maxBytes: VerificationAPI.maxFieldLength) {
            throw VerificationRefusal(400, .badRequest, "description \(problem)", field: "description")
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
