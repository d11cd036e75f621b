// The README's EnQualify example, as an app writes it: this file imports only the EnQualify
// product. ReadmeExampleTests runs it against the reference service.
import EnQualify

final class VerificationScreen: EnQualifyVideoCallDelegate {
    let videoCall = EnQualifyVideoCall()
    let agentPicture: (any VideoRenderer)?
    let askUser: @Sendable (String) -> Bool

    init(agentPicture: (any VideoRenderer)?, askUser: @escaping @Sendable (String) -> Bool) {
        self.agentPicture = agentPicture
        self.askUser = askUser
    }

    func start(baseURL: String, apiKey: String, mapiCertificates: [String]? = nil) {
        videoCall.initialize(self,
                             sessionModel: SessionModelVideoCall(callType: "NewCustomer", userName: "Enqura", surname: "Information",
                                                                 identityType: "ID Card", identityNo: "12345678901", reference: "REF123456"),
                             baseModel: BaseModelVideoCall(mapiCertificateList: mapiCertificates, baseURL: baseURL, locale: "TR",
                                                           mobileUser: "mobile", countryCode: "TUR", apiKey: apiKey))
    }

    func initializeCompleted(moduleName: String) {
        guard moduleName == "EnQualifyVideoCall" else { return }
        do { try videoCall.startVideoCall(remoteVideoRenderer: agentPicture) } catch { print("cannot start: \(error)") }
    }

    func agentRequest(event: AgentRequestEvent, lastEvent: AgentRequestEvent) {
        do {
            switch event {
            case .flashOpen: try videoCall.openTorch(isApproved: askUser("The agent asks to turn the flash on"))
            case .flashClose: try videoCall.closeTorch(isApproved: askUser("The agent asks to turn the flash off"))
            case .ocrRetry: try videoCall.ocrRetry()
            case .faceRetry: try videoCall.faceRetry()
            default: break
            }
        } catch {
            print("\(event): \(error)")  // e.g. retryLimitReached
        }
    }

    func ocrRetryRequested() {
        // The app's own OCR step runs here (EnQualifyOCR.idDocTypeCheckStart in the document).
        do {
            try videoCall.retryCompleted(kind: .ocr, success: true, detail: "MRZ read")
            try videoCall.backToVideoCall()
        } catch { print("ocr retry: \(error)") }
    }

    func callResultCompleted(result: String, description: String, reference: String) {
        print("verdict for \(reference): \(result) (\(description))")
    }

    func tokenCreateFailed() { print("no token: \(videoCall.lastError ?? "")") }
    func videoCallFailed(error: String) { print("call failed: \(error)") }
}
