/// Everything an EnQualify video call tells the app, with the document's names. Every method has
/// a default that does nothing, so an app implements only what it needs.
///
/// Calls arrive one at a time, in order, on one serial context of the SDK (never the caller's
/// thread): `initialize` gives `tokenCreateCompleted` (or `tokenCreateFailed`), then
/// `initializeCompleted` (or `sessionAddFailed` / `settingGetFailed`), then, per call,
/// `integrationAddCompleted`, `callStarted`, the agent's requests with their follow-ups,
/// `hangupConfirmation`, `callResultCompleted` (or `callResultFailed`), and
/// `sessionCloseCompleted` after `closeSession()`.
public protocol EnQualifyVideoCallDelegate: AnyObject, Sendable {
    /// The agent asked for something (`event`); `lastEvent` is the request before it.
    func agentRequest(event: AgentRequestEvent, lastEvent: AgentRequestEvent)
    /// `ocrRetry()` was accepted: start the OCR step (the call's camera is paused until `backToVideoCall()`).
    func ocrRetryRequested()
    /// `faceRetry()` was accepted: start the face step.
    func faceRetryRequested()
    /// The media of the call is connected with the agent.
    func callStarted()
    /// The call has ended and the service confirmed it (either side hung up): leave the call screen.
    func hangupConfirmation()
    /// The call could not start or broke off.
    func videoCallFailed(error: String)
    /// Initialization is done (`moduleName` is `"EnQualifyVideoCall"`): `startVideoCall` may follow.
    func initializeCompleted(moduleName: String)
    /// `closeSession()` closed the back-office session (`status`: the back office's word, `CLOSED`).
    func sessionCloseCompleted(status: String)
    func sessionCloseFailed()
    /// The back office refused the session (`Session/Add`); initialization stopped.
    func sessionAddFailed()
    /// `setHandicappedStatus` could not update the session.
    func sessionUpdateFailed()
    /// The back office's settings could not be read; initialization stopped.
    func settingGetFailed()
    func tokenCreateCompleted()
    /// No token (API key refused, back office unreachable, certificate not pinned); initialization stopped.
    func tokenCreateFailed()
    /// The call was linked to the session at the back office.
    func integrationAddCompleted()
    func integrationAddFailed(errorMessage: String)
    /// Initialization could not begin: `key` names the missing model or the unusable certificate.
    func initializeFailed(with key: String)
    /// The call's room or signalling could not be joined (including a signalling certificate that is not pinned).
    func sessionRoomFailed()
    /// The back office's verdict on the call.
    func callResultCompleted(result: String, description: String, reference: String)
    /// The call ended without a verdict the back office could give.
    func callResultFailed()
    /// A document was set for signing.
    func signingSetCompleted()
    /// The customer's signature was recorded.
    func signingCompleted()
    func signingSetFailed(error: String)
}

extension EnQualifyVideoCallDelegate {
    public func agentRequest(event: AgentRequestEvent, lastEvent: AgentRequestEvent) {}
    public func ocrRetryRequested() {}
    public func faceRetryRequested() {}
    public func callStarted() {}
    public func hangupConfirmation() {}
    public func videoCallFailed(error: String) {}
    public func initializeCompleted(moduleName: String) {}
    public func sessionCloseCompleted(status: String) {}
    public func sessionCloseFailed() {}
    public func sessionAddFailed() {}
    public func sessionUpdateFailed() {}
    public func settingGetFailed() {}
    public func tokenCreateCompleted() {}
    public func tokenCreateFailed() {}
    public func integrationAddCompleted() {}
    public func integrationAddFailed(errorMessage: String) {}
    public func initializeFailed(with key: String) {}
    public func sessionRoomFailed() {}
    public func callResultCompleted(result: String, description: String, reference: String) {}
    public func callResultFailed() {}
    public func signingSetCompleted() {}
    public func signingCompleted() {}
    public func signingSetFailed(error: String) {}
}
