import ECVProtocol
import Foundation
import Soup

/// The identity-verification back office's REST endpoints (docs/protocol.md §7): `/kyc/api/<Group>/<Action>`.
/// Bodies are bounded by the server's body limit and validated field by field; every refusal is
/// the service's JSON error body naming the reason.
extension ServiceRouter {
    func verification(_ segments: [String], _ request: HTTPServerRequest) async -> HTTPServerResponse {
        guard segments.count >= 3, segments[1] == "api" else { return notFound(request) }
        let name = segments.dropFirst(2).joined(separator: "/")
        let office = core.verification
        let response: HTTPServerResponse
        do throws(VerificationRefusal) {
            switch (name, request.method.uppercased()) {
            case ("Token/Create", "POST"):
                _ = try decodeIfPresent(TokenCreateRequest.self, request)
                response = .ecvJSON(try office.createToken(apiKey: request.headers[VerificationAPI.apiKeyHeader],
                                                           address: clientAddress(of: request)))
            case ("Session/Add", "POST"):
                let token = try office.authenticate(bearerToken(request.headers["Authorization"]))
                response = .ecvJSON(try office.addSession(try decode(SessionModelVideoCall.self, request), token: token,
                                                          address: clientAddress(of: request)))
            case ("Session/Update", "POST"):
                let token = try office.authenticate(bearerToken(request.headers["Authorization"]))
                let update = try decode(SessionUpdateRequest.self, request)
                // The session's own call (links are exclusive and need the caller's token), when live,
                // follows the new flags: a waiting one moves in its queue. Under the back office's
                // lock, so an Integration/Add at the same time cannot leave the call the older flags.
                try office.withSession(update.sessionId, token: token) { session in
                    session.hearingImpaired = update.hearingImpaired
                    session.visuallyImpaired = update.visuallyImpaired
                    if let rtcId = session.rtcId { applyAccessibility(of: update, to: rtcId, after: "Session/Update") }
                }
                response = .ecvJSON(VerificationStatusResponse(status: "OK"))
            case ("Session/Close", "POST"):
                let token = try office.authenticate(bearerToken(request.headers["Authorization"]))
                let close = try decode(SessionReference.self, request)
                try office.withSession(close.sessionId, token: token) { $0.closed = true }
                response = .ecvJSON(VerificationStatusResponse(status: "CLOSED"))
            case ("Settings/Get", "GET"):
                let token = try office.authenticate(bearerToken(request.headers["Authorization"]))
                let id = try sessionQuery(request)
                var settings = try office.settings(forSession: id, token: token)
                if settings.serviceUrl == nil { settings.serviceUrl = advertisedBase(for: request) }
                response = .ecvJSON(settings)
            case ("Integration/Add", "POST"):
                let token = try office.authenticate(bearerToken(request.headers["Authorization"]))
                let link = try decode(IntegrationAddRequest.self, request)
                guard ECVAPI.isValidRtcId(link.rtcId) else {
                    throw VerificationRefusal(400, .badRequest, "rtcId must be 1-128 characters of [A-Za-z0-9._~-]", field: "rtcId")
                }
                // An rtcId is no secret (§1.9): only the call's caller may tie it to a session, or
                // anyone holding the app's API key could take another customer's verdict.
                try requireCaller(request, rtcId: link.rtcId)
                // The call follows the session's flags from now on, also those a Session/Update set
                // between the DialEx and this link.
                try office.link(sessionId: link.sessionId, rtcId: link.rtcId, token: token) { flags in
                    applyAccessibility(of: flags, to: link.rtcId, after: "Integration/Add")
                }
                response = .ecvJSON(VerificationStatusResponse(status: "OK"))
            case ("Signing/Set", "POST"):
                let token = try office.authenticate(bearerToken(request.headers["Authorization"]))
                let signing = try decode(SigningSetRequest.self, request)
                if signing.documentName.isEmpty { throw VerificationRefusal(400, .badRequest, "documentName is empty", field: "documentName") }
                if let problem = ServiceLimits.lineTextProblem(signing.documentName, maxBytes: VerificationAPI.maxFieldLength) {
                    throw VerificationRefusal(400, .badRequest, "documentName \(problem)", field: "documentName")
                }
                guard (1...VerificationAPI.maxDocumentBytes).contains(signing.document.utf8.count) else {
                    throw VerificationRefusal(400, .badRequest, "document must be 1-\(VerificationAPI.maxDocumentBytes) bytes", field: "document")
                }
                let digest = Self.digest(signing.document)
                try office.withSession(signing.sessionId, token: token) { $0.signing = (signing.documentName, digest, false) }
                response = .ecvJSON(VerificationStatusResponse(status: "OK"))
            case ("Signing/Complete", "POST"):
                let token = try office.authenticate(bearerToken(request.headers["Authorization"]))
                let reference = try decode(SessionReference.self, request)
                try office.withSession(reference.sessionId, token: token) { session throws(VerificationRefusal) in
                    guard let signing = session.signing else {
                        throw VerificationRefusal(409, .invalidState, "no document was set for signing (Signing/Set)")
                    }
                    session.signing = (signing.name, signing.digest, true)
                }
                response = .ecvJSON(VerificationStatusResponse(status: "SIGNED"))
            case ("CallResult", "GET"):
                let token = try office.authenticate(bearerToken(request.headers["Authorization"]))
                let id = try sessionQuery(request)
                guard let result = try office.withSession(id, token: token, allowClosed: true, { $0.result }) else {
                    throw VerificationRefusal(404, "NO_RESULT", "the agent has not posted a verdict yet")
                }
                response = .ecvJSON(result)
            case ("CallResult", "POST"):
                let post = try decode(CallResultPost.self, request)
                try requireConnectedAgent(request, rtcId: post.rtcId)
                try office.postResult(post)
                core.log.record(.rest, "CallResult \(post.rtcId) → \(post.result)", rtcId: post.rtcId)
                response = .ecvJSON(VerificationStatusResponse(status: "OK"))
            case ("Token/Create", _), ("Session/Add", _), ("Session/Update", _), ("Session/Close", _), ("Integration/Add", _),
                 ("Signing/Set", _), ("Signing/Complete", _):
                throw VerificationRefusal(405, "METHOD_NOT_ALLOWED", "\(request.path) takes POST, not \(request.method)")
            case ("Settings/Get", _):
                throw VerificationRefusal(405, "METHOD_NOT_ALLOWED", "\(request.path) takes GET, not \(request.method)")
            case ("CallResult", _):
                throw VerificationRefusal(405, "METHOD_NOT_ALLOWED", "\(request.path) takes GET or POST, not \(request.method)")
            default:
                return notFound(request)
            }
        } catch {
            core.log.record(.rest, "\(request.method) \(request.path) → \(error.status) \(error.body.code): \(error.body.message)")
            return .ecvError(error.status, error.body, headers: error.retryAfter.map { ["Retry-After": String($0)] } ?? [:])
        }
        core.log.record(.rest, "\(request.method) \(request.path) → 200")
        return response
    }

    /// An optional body: none at all is nil, anything else must be valid.
    private func decodeIfPresent<T: Decodable>(_ type: T.Type, _ request: HTTPServerRequest) throws(VerificationRefusal) -> T? {
        request.body.isEmpty ? nil : try decode(type, request) as T
    }

    private func decode<T: Decodable>(_ type: T.Type, _ request: HTTPServerRequest) throws(VerificationRefusal) -> T {
        do { return try ECVJSON.decode(T.self, from: Data(request.body)) } catch {
            throw VerificationRefusal(400, .badRequest, error.description, field: error.field)
        }
    }

    private func sessionQuery(_ request: HTTPServerRequest) throws(VerificationRefusal) -> String {
        guard let id = request.queryValue(VerificationAPI.sessionIdQueryName), (1...128).contains(id.count) else {
            throw VerificationRefusal(400, .badRequest, "?\(VerificationAPI.sessionIdQueryName)= is missing", field: VerificationAPI.sessionIdQueryName)
        }
        return id
    }

    /// Gives a live call the accessibility flags of its session (docs/protocol.md §7.5).
    private func applyAccessibility(of flags: SessionUpdateRequest, to rtcId: String, after step: String) {
        do {
            let priority = try core.withEngine { engine throws(ACDError) in
                try engine.setAccessibility(rtcId: rtcId, hearingImpaired: flags.hearingImpaired, visuallyImpaired: flags.visuallyImpaired)
            }
            core.log.record(.rest, "\(step): call \(rtcId) now has priority \(priority)", rtcId: rtcId)
        } catch {
            core.log.record(.rest, "\(step): call \(rtcId) is not live (\(error.code)); the session alone changed", rtcId: rtcId)
        }
    }

    /// The request holds the call's caller credential (§1.9): the caller token DialEx issued, as
    /// `X-ECV-Token`. A call the ECV service does not know, or not dialed yet, has no caller to prove.
    private func requireCaller(_ request: HTTPServerRequest, rtcId: String) throws(VerificationRefusal) {
        switch core.engine.callerAccess(rtcId: rtcId, token: callCredential(of: request)) {
        case .open, .granted(.caller):
            return
        case .unknownCall:
            throw VerificationRefusal(404, .unknownRtcId, "the ECV service has no call \(rtcId)", field: "rtcId")
        case .notDialed:
            throw VerificationRefusal(409, .invalidState, "call \(rtcId) was not dialed yet: link it after DialEx, with its caller token")
        case .missingCredential:
            throw VerificationRefusal(401, .unauthorized, "linking a call needs its caller token (header \(ECVAPI.callTokenHeader))")
        case .denied, .granted(.agent):
            throw VerificationRefusal(403, .forbidden, "the credential is not call \(rtcId)'s caller token")
        }
    }

    /// The verdict comes from the agent connected to the call: its session token, and the call in its hands.
    private func requireConnectedAgent(_ request: HTTPServerRequest, rtcId: String) throws(VerificationRefusal) {
        guard let token = bearerToken(request.headers["Authorization"]) else {
            throw VerificationRefusal(401, .unauthorized, "Authorization: Bearer <agent session token> is missing")
        }
        guard let agentId = core.engine.agentId(forToken: token) else {
            throw VerificationRefusal(401, .unauthorized, "the agent token is unknown")
        }
        let connected = core.engine.snapshot().interactions.contains { $0.rtcId == rtcId && $0.phase == .connected(agentId: agentId) }
        guard connected else { throw VerificationRefusal(403, .forbidden, "call \(rtcId) is not connected to this agent") }
    }

    /// A short, stable digest of a document for the record (FNV-1a 64; the document itself is not kept).
    private static func digest(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return String(hash, radix: 16)
    }
}
