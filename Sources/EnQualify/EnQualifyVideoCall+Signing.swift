import ECVProtocol
import Foundation

/// Signing a document at the back office (docs/protocol.md §7.7).
extension EnQualifyVideoCall {
    /// Sets a document for the customer to sign: `signingSetCompleted` or `signingSetFailed(error:)`.
    public func setSigning(documentName: String, document: String) {
        signingRequest(VerificationAPI.signingSet, { SigningSetRequest(sessionId: $0, documentName: documentName, document: document) }) {
            $0.signingSetCompleted()
        }
    }

    /// Records the customer's signature of the document set before: `signingCompleted` or `signingSetFailed(error:)`.
    public func completeSigning() {
        signingRequest(VerificationAPI.signingComplete, { SessionReference(sessionId: $0) }) { $0.signingCompleted() }
    }

    private func signingRequest<Body: Encodable & Sendable>(_ path: String, _ body: @escaping @Sendable (String) -> Body,
                                                            done: @escaping @Sendable (any EnQualifyVideoCallDelegate) -> Void) {
        let request: (BackOfficeClient, String, String)? = state.withLock { state in
            guard let office = state.backOffice, let token = state.token, let id = state.sessionId else { return nil }
            return (office, token, id)
        }
        guard let (office, token, id) = request else {
            let message = "there is no session (initialize first)"
            tell(failure: "signing failed: \(message)") { $0.signingSetFailed(error: message) }
            return
        }
        Task {
            do {
                _ = try await office.send("POST", path, token: token, body: body(id), as: VerificationStatusResponse.self)
                self.tell(done)
            } catch {
                self.tell(failure: "signing failed: \(error)") { $0.signingSetFailed(error: "\(error)") }
            }
        }
    }
}
