import ECVProtocol
import Foundation
import Soup

/// ECV REST for callers (docs/protocol.md §1.2–§1.5, §1.8).
extension ServiceRouter {
    func getRtcId(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        await core.script.applyDelay(.getRtcId)
        if let refusal = admitCallRequest(request, "GetRtcId") { return refusal }
        if core.engine.population.issuedRtcIds >= core.configuration.limits.maxIssuedRtcIds {
            core.log.record(.rest, "GetRtcId refused: \(core.configuration.limits.maxIssuedRtcIds) rtcIds are waiting to be dialed")
            return .ecvError(503, ServiceErrorResponse(code: .serviceUnavailable, message: "too many undialed rtcIds; try again later"))
        }
        let rtcId = core.withEngine { $0.issueRtcId() }
        core.log.record(.rest, "GetRtcId → \(rtcId)", rtcId: rtcId)
        return .ecvJSON(GetRtcIdResponse(rtcId: rtcId))
    }

    func dialEx(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        await core.script.applyDelay(.dialEx)
        if let refusal = admitCallRequest(request, "DialEx") { return refusal }
        let dial: DialExRequest
        do {
            dial = core.verification.withSessionPriority(try ECVJSON.decode(DialExRequest.self, from: Data(request.body)))
        } catch {
            core.log.record(.rest, "DialEx refused: \(error)")
            return .badRequest(error)
        }
        // Bounded before anything is kept or forwarded: an agent's offer frame stays far below
        // what an agent socket accepts, whatever a caller sends.
        if let problem = core.configuration.limits.problem(in: dial) {
            core.log.record(.rest, "DialEx refused: \(problem)")
            return .badRequest(problem)
        }
        if core.engine.population.liveCalls >= core.configuration.limits.maxLiveCalls {
            core.log.record(.rest, "DialEx refused: \(core.configuration.limits.maxLiveCalls) calls are live")
            return .ecvError(503, ServiceErrorResponse(code: .serviceUnavailable, message: "too many calls; try again later"))
        }
        let headers = request.headers.map { RequestHeader(name: $0.name, value: $0.value) }
        core.script.recordDial(rtcId: dial.rtcId, headers: headers)
        if let rejection = core.script.verdict(for: DialAuthorizationRequest(dial: dial, headers: headers)) {
            core.log.record(.rest, "DialEx \(dial.rtcId) → \(rejection)", rtcId: dial.rtcId)
            return .ecvError(rejection)
        }
        let key = request.headers[ECVAPI.idempotencyKeyHeader]
        if let key {
            if let problem = DialReplay.problem(in: key) { return .badRequest(problem) }
            if let replayed = replayedDial(key: key, rtcId: dial.rtcId) { return replayed }
        }
        do {
            let response = try core.withEngine { engine throws(ACDError) in try engine.dial(dial) }
            if let key { core.dialReplay.remember(key: key, rtcId: dial.rtcId, response: response) }
            core.presence.track(dial.rtcId)
            core.log.record(.rest, "DialEx \(dial.rtcId) → 200 \(response.interactionId), queue \(response.queue), "
                + "priority \(response.priority)", rtcId: dial.rtcId)
            return .ecvJSON(response)
        } catch {
            // Two attempts of one DialEx in flight at once: the later one answers as the first did.
            if case .alreadyDialed = error, let key, let replayed = replayedDial(key: key, rtcId: dial.rtcId) { return replayed }
            core.log.record(.rest, "DialEx \(dial.rtcId) → \(error.httpStatus) \(error.code): \(error)", rtcId: dial.rtcId)
            return .ecvError(error)
        }
    }

    /// The first answer to a DialEx retried with the same idempotency key, if there was one.
    private func replayedDial(key: String, rtcId: String) -> HTTPServerResponse? {
        guard let response = core.dialReplay.answer(key: key, rtcId: rtcId) else { return nil }
        core.log.record(.rest, "DialEx \(rtcId) retried with the same Idempotency-Key → the first answer replayed", rtcId: rtcId)
        return .ecvJSON(response)
    }

    func hangup(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        await core.script.applyDelay(.hangup)
        let hangup: HangupRequest
        do {
            hangup = try ECVJSON.decode(HangupRequest.self, from: Data(request.body))
        } catch {
            core.log.record(.rest, "Hangup refused: \(error)")
            return .badRequest(error)
        }
        let access = core.engine.callerAccess(rtcId: hangup.rtcId, token: callCredential(of: request))
        if let refusal = HTTPServerResponse.callRefusal(access, acting: "caller") {
            core.log.record(.rest, "Hangup \(hangup.rtcId) refused: \(access)", rtcId: hangup.rtcId)
            return refusal
        }
        do {
            try core.withEngine { engine throws(ACDError) in try engine.hangUp(rtcId: hangup.rtcId) }
            core.log.record(.rest, "Hangup \(hangup.rtcId) (\(hangup.reason ?? "no reason")) → ended", rtcId: hangup.rtcId)
            return .ecvJSON(HangupResponse(rtcId: hangup.rtcId))
        } catch {
            core.log.record(.rest, "Hangup \(hangup.rtcId) → \(error.httpStatus) \(error.code)", rtcId: hangup.rtcId)
            return .ecvError(error)
        }
    }

    /// Both polling endpoints: the legacy one never carries queue figures, nor does the queue-info
    /// one of a service without queue statistics.
    func poll(_ request: HTTPServerRequest, endpoint: ServiceEndpoint) async -> HTTPServerResponse {
        await core.script.applyDelay(endpoint)
        guard let rtcId = request.queryValue(ECVAPI.rtcIdQueryName), !rtcId.isEmpty else {
            return .badRequest(.missingField(ECVAPI.rtcIdQueryName))
        }
        let access = core.engine.callerAccess(rtcId: rtcId, token: callCredential(of: request))
        if !access.allowsCallerRead, let refusal = HTTPServerResponse.callRefusal(access, acting: "caller") { return refusal }
        if access.allowsCaller { core.presence.seen(rtcId) }
        var info = core.withEngine { $0.queueInfo(rtcId: rtcId) }
        if core.script.takeNotFoundPoll(rtcId: rtcId) { info = QueueInfoResponse(rtcId: rtcId, state: .notFound, position: -1, ewtSeconds: -1) }
        if endpoint == .waitForRoomInterval || !core.configuration.queueStatistics {
            info = info.withoutQueueFigures
        }
        return .ecvJSON(info)
    }

    func queues(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        await core.script.applyDelay(.queues)
        return .ecvJSON(core.withEngine { $0.queueSummaries() })
    }
}

/// Agent login and logout (docs/protocol.md §3.1); the socket is `AgentSocketHub`.
extension ServiceRouter {
    func agentLogin(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        await core.script.applyDelay(.agentLogin)
        let login: AgentLoginRequest
        do {
            login = try ECVJSON.decode(AgentLoginRequest.self, from: Data(request.body))
        } catch {
            core.log.record(.agent, "Login refused: \(error)")
            return .badRequest(error)
        }
        let limits = core.configuration.limits
        if let problem = limits.nameProblem(login.name, field: "name") {
            core.log.record(.agent, "Login refused: \(problem)")
            return .badRequest(problem)
        }
        if (login.secret?.utf8.count ?? 0) > limits.maxSecretBytes {
            return .badRequest(.invalidValue(field: "secret", reason: "is longer than \(limits.maxSecretBytes) bytes"))
        }
        let secrets = core.configuration.agentSecrets
        if secrets.isEmpty && !core.configuration.openAgents {
            core.log.record(.agent, "Login of \"\(login.name)\" refused: the service has no agent secret and is not open to agents")
            return .ecvError(401, ServiceErrorResponse(code: .unauthorized, message: "this service admits no agents: it has no agent secret"))
        }
        if !secrets.isEmpty, !constantTimeContains(secrets, login.secret ?? "") {
            core.log.record(.agent, "Login of \"\(login.name)\" refused: wrong or missing secret")
            return .ecvError(401, ServiceErrorResponse(code: .unauthorized, message: "wrong or missing agent secret"))
        }
        if core.engine.population.agents >= limits.maxAgents {
            core.log.record(.agent, "Login of \"\(login.name)\" refused: \(limits.maxAgents) agents are logged in")
            return .ecvError(503, ServiceErrorResponse(code: .serviceUnavailable, message: "too many agents logged in"))
        }
        do {
            let response = try core.withEngine { engine throws(ACDError) in try engine.login(name: login.name, servesAccessibility: login.servesAccessibility ?? false) }
            core.log.record(.agent, "\(response.agentId) logged in as \"\(login.name)\"")
            return .ecvJSON(response)
        } catch {
            return .ecvError(error)
        }
    }

    func agentLogout(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        await core.script.applyDelay(.agentLogout)
        guard let token = bearerToken(request.headers["Authorization"]),
              let agentId = core.engine.agentId(forToken: token) else {
            return .ecvError(401, ServiceErrorResponse(code: .unauthorized, message: "missing or unknown bearer token"))
        }
        do {
            try core.withEngine { engine throws(ACDError) in try engine.removeAgent(agentId) }
        } catch {
            return .ecvError(error)
        }
        core.agentSockets.detach(agentId: agentId, reason: "logged out")
        core.log.record(.agent, "\(agentId) logged out")
        return .ecvJSON(AgentLogoutResponse(agentId: agentId))
    }
}

extension ServiceRouter {
    /// `429` when the request's address made too many call requests this minute.
    func admitCallRequest(_ request: HTTPServerRequest, _ name: String) -> HTTPServerResponse? {
        let address = clientAddress(of: request)
        guard !core.callQuota.admit(address) else { return nil }
        core.log.record(.rest, "\(name) from \(address) refused: over "
            + "\(core.configuration.limits.maxCallRequestsPerAddressPerMinute) call requests a minute")
        return .ecvError(429, ServiceErrorResponse(code: "TOO_MANY_REQUESTS", message: "too many call requests from this address; "
            + "try again in a minute"), headers: ["Retry-After": "60"])
    }
}
