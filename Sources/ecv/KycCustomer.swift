import ECV
import EnQualify
import Foundation
import GLibCore

/// The customer's side of a verification call for `ecv kyc` and `ecv demo --kyc`: an
/// `EnQualifyVideoCallDelegate` that prints every delegate call as it arrives, keeps them in
/// order for the summary, and answers the agent as a scripted user would (the torch per
/// `approvesTorch`, each repeated step passing or failing per `retriesPass`).
final class KycCustomer: EnQualifyVideoCallDelegate {
    let call = EnQualifyVideoCall()
    private let printer: CallPrinter
    private let approvesTorch: @Sendable (AgentRequestEvent) -> Bool
    private let retriesPass: Bool
    private let calls = Locked<[String]>([])
    private let hungUp = Locked(false)
    private let verdict = Locked<String?>(nil)
    /// The verdict as delivered (`callResultCompleted`), kept after `deinitialize`.
    var verdictText: String? { verdict.value }
    private let lastFailure = Locked<String?>(nil)
    /// The facade's `lastError` when the call was over, kept after `deinitialize`.
    var failure: String? { lastFailure.value ?? call.lastError }
    /// Resolved when the flow is over: a failure that stops it, or the call's end with its verdict (or none).
    let finished = OneShot<Bool, Never>()
    /// Resolved true by `initializeCompleted`, false by a failure that stops the init flow.
    let initialized = OneShot<Bool, Never>()
    /// Resolved with `closeSession()`'s outcome.
    let sessionClosed = OneShot<Bool, Never>()

    init(printer: CallPrinter, approvesTorch: @escaping @Sendable (AgentRequestEvent) -> Bool, retriesPass: Bool) {
        self.printer = printer
        self.approvesTorch = approvesTorch
        self.retriesPass = retriesPass
    }

    /// Every delegate call so far, in delivery order.
    var trail: [String] { calls.value }

    private func record(_ entry: String) {
        calls.withLock { $0.append(entry) }
        line("delegate", entry)
    }

    private func note(_ text: String) { line("customer", text) }

    /// `  1.23s  delegate  …` for a person, `{"t":1.23,"event":"delegate","text":"…"}` for a script.
    private func line(_ kind: String, _ text: String) {
        if printer.json {
            NDJSON.emit(["t": (printer.elapsed * 1000).rounded() / 1000, "event": kind, "text": text])
        } else {
            say(String(format: "%6.2fs  ", printer.elapsed) + kind + "  " + text)
        }
    }

    /// A call control the customer makes; a refusal is printed (the flow goes on).
    private func act(_ what: String, _ action: () throws(EnQualifyError) -> Void) {
        do { try action() } catch { note("\(what) refused: \(error)") }
    }

    func agentRequest(event: AgentRequestEvent, lastEvent: AgentRequestEvent) {
        record("agentRequest(event: .\(event), lastEvent: .\(lastEvent))")
        switch event {
        case .flashOpen, .flashClose:
            let approved = approvesTorch(event)
            note("the user \(approved ? "approves" : "refuses") the torch \(event == .flashOpen ? "on" : "off")")
            act("the torch answer") { () throws(EnQualifyError) in
                if event == .flashOpen { try call.openTorch(isApproved: approved) } else { try call.closeTorch(isApproved: approved) }
            }
        case .ocrRetry: act("ocrRetry()") { () throws(EnQualifyError) in try call.ocrRetry() }
        case .faceRetry: act("faceRetry()") { () throws(EnQualifyError) in try call.faceRetry() }
        case .nfcRetry:
            act("the NFC outcome") { () throws(EnQualifyError) in try call.retryCompleted(kind: .nfc, success: retriesPass, detail: "chip read") }
        case .none, .callResult: break
        }
    }

    private func runStep(_ kind: VerificationRetryKind, passed: String, failed: String) {
        note("runs the \(kind.rawValue) step again: \(retriesPass ? passed : failed)")
        act("the \(kind.rawValue) outcome") { () throws(EnQualifyError) in
            try call.retryCompleted(kind: kind, success: retriesPass, detail: retriesPass ? passed : failed)
            try call.backToVideoCall()
        }
    }

    func ocrRetryRequested() {
        record("ocrRetryRequested()")
        runStep(.ocr, passed: "document read", failed: "document not readable")
    }

    func faceRetryRequested() {
        record("faceRetryRequested()")
        runStep(.face, passed: "face matches the document", failed: "no face found")
    }

    func callStarted() { record("callStarted()") }
    func hangupConfirmation() {
        record("hangupConfirmation()")
        hungUp.withLock { $0 = true }
        if call.callResult != nil { finished.resolve(.success(true)) }
    }
    func videoCallFailed(error: String) { record("videoCallFailed(error: \(error.debugDescription))"); finished.resolve(.success(false)) }
    func initializeCompleted(moduleName: String) {
        record("initializeCompleted(moduleName: \"\(moduleName)\")")
        initialized.resolve(.success(moduleName == EnQualifyVideoCall.moduleName))
    }
    private func initializationStopped() {
        initialized.resolve(.success(false))
        finished.resolve(.success(false))
    }
    func sessionCloseCompleted(status: String) { record("sessionCloseCompleted(status: \"\(status)\")"); sessionClosed.resolve(.success(true)) }
    func sessionCloseFailed() { record("sessionCloseFailed()"); sessionClosed.resolve(.success(false)) }
    func sessionAddFailed() { record("sessionAddFailed()"); initializationStopped() }
    func sessionUpdateFailed() { record("sessionUpdateFailed()") }
    func settingGetFailed() { record("settingGetFailed()"); initializationStopped() }
    func tokenCreateCompleted() { record("tokenCreateCompleted()") }
    func tokenCreateFailed() { record("tokenCreateFailed()"); initializationStopped() }
    func integrationAddCompleted() { record("integrationAddCompleted()") }
    func integrationAddFailed(errorMessage: String) { record("integrationAddFailed(errorMessage: \(errorMessage.debugDescription))"); finished.resolve(.success(false)) }
    func initializeFailed(with key: String) { record("initializeFailed(with: \(key.debugDescription))"); initializationStopped() }
    func sessionRoomFailed() { record("sessionRoomFailed()"); finished.resolve(.success(false)) }
    func callResultCompleted(result: String, description: String, reference: String) {
        record("callResultCompleted(result: \"\(result)\", description: \(description.debugDescription), reference: \"\(reference)\")")
        verdict.withLock { $0 = "\(result) (\(description)) for \(reference)" }
        if hungUp.value { finished.resolve(.success(true)) }
    }
    func callResultFailed() { record("callResultFailed()"); finished.resolve(.success(false)) }
    func signingSetCompleted() { record("signingSetCompleted()") }
    func signingCompleted() { record("signingCompleted()") }
    func signingSetFailed(error: String) { record("signingSetFailed(error: \(error.debugDescription))") }

    /// Initializes, starts the call once initialized, waits for its end, closes the session.
    /// Returns whether the whole flow succeeded (a verdict arrived and the session closed).
    func run(sessionModel: SessionModelVideoCall, baseModel: BaseModelVideoCall, hearing: Bool, visually: Bool) async -> Bool {
        call.initialize(self, sessionModel: sessionModel, baseModel: baseModel)
        guard await initialized.value() else { return false }
        if hearing || visually {
            note("asks for accessible routing (hearing: \(hearing), visually: \(visually))")
            call.setHandicappedStatus(hearing: hearing, visually: visually)
        }
        do { try call.startVideoCall() } catch {
            note("startVideoCall refused: \(error)")
            return false
        }
        let succeeded = await finished.value()
        lastFailure.withLock { $0 = call.lastError }
        // A session that may close itself (canAutoClose) does so when its call ends; closing it
        // again would only fail (sessionCloseFailed) after its sessionCloseCompleted.
        if !sessionModel.canAutoClose { call.closeSession() }
        let closed = await sessionClosed.value()
        await call.delegateCallsDelivered()
        call.deinitialize(deinitializeCore: true)
        return succeeded && closed
    }
}
