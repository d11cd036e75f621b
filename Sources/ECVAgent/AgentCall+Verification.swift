import ECV
import ECVProtocol
import Foundation
import GLibCore
import Soup

/// What the customer answered to a process-retry request (`AgentCall.requestRetry`).
public struct VerificationRetryAnswer: Sendable, Equatable, CustomStringConvertible {
    /// The customer's side started the step again (`ocrRetry()`/`faceRetry()`).
    public var started = false
    /// How the step ended (`succeeded`, `failed`, `limitReached`), or nil when no end came in time.
    public var outcome: VerificationCommand.RetryOutcome?
    public var detail: String?

    public init(started: Bool = false, outcome: VerificationCommand.RetryOutcome? = nil, detail: String? = nil) {
        self.started = started
        self.outcome = outcome
        self.detail = detail
    }

    public var description: String {
        var text = started ? "started" : "not started"
        if let outcome { text += ", \(outcome.rawValue)" } else { text += ", no outcome" }
        if let detail { text += " (\(detail))" }
        return text
    }
}

/// The verification agent's side of an EnQualify call (docs/protocol.md §4.1, §7): process-retry
/// requests with the customer's answers, and the verdict.
extension AgentCall {
    /// Asks the customer to repeat `step` (`OCR_RETRY`, `FACE_RETRY`, `NFC_RETRY`) and waits for
    /// its end (`SUCCEEDED`, `FAILED`, `LIMIT_REACHED`) or `timeout`, whichever is first.
    public func requestRetry(_ step: VerificationCommand.VerificationStep, timeout: Duration = .seconds(30))
        async throws(AgentBotError) -> VerificationRetryAnswer {
        let events = upcomingEvents()
        try send(.raw(VerificationCommand.retryRequest(step).text))
        let answer = Locked(VerificationRetryAnswer())
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in events {
                    guard case .text(let text) = event, case .retryOutcome(step, let outcome, let detail)? = VerificationCommand(parsing: text)
                    else {
                        if case .ended = event { return }
                        continue
                    }
                    let done = answer.withLock { answer -> Bool in
                        if outcome == .started { answer.started = true; return false }
                        answer.outcome = outcome
                        answer.detail = detail
                        return true
                    }
                    if done { return }
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout) // cancelled when the answer came first: nothing to wait for
            }
            await group.next()
            group.cancelAll()
        }
        return answer.value
    }

    /// Posts the verdict to the back office (`POST /kyc/api/CallResult` with this agent's session
    /// token) and tells the customer it is there (`CALL_RESULT`). `result`: 1-32 of [A-Z_]
    /// (`APPROVED`, `REJECTED`, …).
    public func postVerdict(result: String, description: String) async throws(AgentBotError) {
        guard let bot, let token = bot.sessionToken else { throw .notConnected }
        let url = ECVAPI.url(base: bot.configuration.serviceUrl, path: VerificationAPI.callResult)
        let body: Data
        do { body = try ECVJSON.encode(CallResultPost(rtcId: rtcId, result: result, description: description)) } catch {
            throw .rejected(code: "BAD_REQUEST", message: error.description)
        }
        var request = HTTPRequest(method: "POST", url: url, headers: ["Authorization": "Bearer \(token)"], body: body)
        request.headers["Content-Type"] = "application/json"
        let response: HTTPResponse
        do {
            response = try await bot.tls.httpClient(connectTimeout: .seconds(5), readTimeout: .seconds(10), userAgent: "ECVKit-Agent", signaling: false)
                .send(request)
        } catch {
            throw .rejected(code: "TRANSPORT", message: error.description)
        }
        guard response.isSuccess else {
            // An error body that is not the service's JSON still leaves the status to report.
            let error = try? ECVJSON.decode(ServiceErrorResponse.self, from: response.data)
            throw .rejected(code: error?.code.rawValue ?? "HTTP_\(response.status)", message: error?.message ?? "HTTP \(response.status)")
        }
        try send(.raw(VerificationCommand.callResultReady.text))
    }
}
