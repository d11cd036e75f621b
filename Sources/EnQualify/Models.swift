import ECVProtocol
import Foundation

extension SessionModelVideoCall {
    /// The name the agent sees: "userName surname", or the reference.
    var displayName: String {
        let name = [userName, surname].compactMap { $0?.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: " ")
        return name.isEmpty ? reference : name
    }
}

/// Where the back office is and which certificates its servers must present (EnQualify's
/// `BaseModelVideoCall`).
///
/// The signalling lists pin the call's rooms and signalling WebSocket; the MAPI lists pin the back
/// office's REST API and the ECV API (REST, queue socket). Each has a DER form (`…CertificateList`:
/// paths of `.der` files, PEM accepted too) and a Base64 form (`…CertificateBase64List`: Base64 of
/// the DER); the two forms of one connection add up. A certificate that cannot be read or parsed
/// makes `initialize` fail (`initializeFailed(with:)` naming the list and entry): a connection is
/// never left unpinned because a certificate was wrong. With no MAPI certificate the system's CA
/// store decides; with no signalling certificate the MAPI ones pin signalling too.
///
/// A DER-list entry is a file path, or, as the document's `"AI_CERT_1"` names a resource of the
/// app bundle, a bare name looked up in `certificateDirectory` (the app's certificate folder):
/// `<dir>/<name>`, then `<name>.der`, `.cer`, `.crt`, `.pem`. A name that matches nothing fails
/// `initialize` like an unreadable path.
public struct BaseModelVideoCall: Sendable, Equatable {
    public var signallingCertificateList: [String]?
    public var mapiCertificateList: [String]?
    public var signallingCertificateBase64List: [String]?
    public var mapiCertificateBase64List: [String]?
    /// The back office's base URL (mandatory).
    public var baseURL: String
    public var locale: String?
    public var mobileUser: String?
    public var countryCode: String?
    /// The integrator's API key for `Token/Create` (an addition: the document's back office gets
    /// it from the Core module's configuration).
    public var apiKey: String?
    /// Where bare certificate names of the DER lists are looked up (the headless stand-in for the
    /// app bundle's resources); nil: the process's working directory.
    public var certificateDirectory: String?
    /// ICE server URLs the call uses besides those the join answer lists, e.g.
    /// `stun:stun.example.com:3478` (an addition, as `ECVSdkConfiguration.iceServers`): a call whose
    /// join answer lists none and with none here fails with `NO_ICE_SERVERS_FOUND`.
    public var iceServers: [String]?

    public init(signallingCertificateList: [String]? = nil, mapiCertificateList: [String]? = nil,
                signallingCertificateBase64List: [String]? = nil, mapiCertificateBase64List: [String]? = nil,
                baseURL: String, locale: String? = nil, mobileUser: String? = nil, countryCode: String? = nil, apiKey: String? = nil,
                certificateDirectory: String? = nil, iceServers: [String]? = nil) {
        self.iceServers = iceServers
        self.signallingCertificateList = signallingCertificateList
        self.mapiCertificateList = mapiCertificateList
        self.signallingCertificateBase64List = signallingCertificateBase64List
        self.mapiCertificateBase64List = mapiCertificateBase64List
        self.baseURL = baseURL
        self.locale = locale
        self.mobileUser = mobileUser
        self.countryCode = countryCode
        self.apiKey = apiKey
        self.certificateDirectory = certificateDirectory
    }
}

/// What the agent asked for during the call (`agentRequest(event:lastEvent:)`).
public enum AgentRequestEvent: String, Sendable, Hashable, CaseIterable {
    /// Before the first request (`lastEvent` of the first one).
    case none
    /// Turn the torch on: ask the user, then `openTorch(isApproved:)`.
    case flashOpen
    /// Turn the torch off: ask the user, then `closeTorch(isApproved:)`.
    case flashClose
    /// Repeat the OCR step: `ocrRetry()` when the user agrees.
    case ocrRetry
    /// Repeat the face step: `faceRetry()` when the user agrees.
    case faceRetry
    /// Repeat the NFC step (the app runs it and reports with `retryCompleted(kind: .nfc, …)`).
    case nfcRetry
    /// The agent posted the verdict; `callResultCompleted` follows.
    case callResult
}

/// A verification step the agent can ask to repeat ("process retry").
public enum VerificationRetryKind: String, Sendable, Hashable, CaseIterable {
    case ocr, face, nfc
}

/// The back office's verdict on a call (`callResultCompleted(result:description:reference:)`).
public struct EnQualifyCallResult: Sendable, Equatable {
    public let result: String
    public let description: String
    public let reference: String
}

/// Why an EnQualify call refused what the app asked (the API throws it; `lastError` keeps the
/// latest failure of any step as text).
public enum EnQualifyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `startVideoCall` (or a call control) before `initializeCompleted`.
    case notInitialized
    /// A retry, torch answer or signing step outside an active video call.
    case notInCall
    /// `startVideoCall` while a call is already under way.
    case callAlreadyStarted
    /// The back office's retry limit for this step is reached in this call.
    case retryLimitReached(VerificationRetryKind, limit: Int)
    /// `openTorch`/`closeTorch` with no such agent request waiting for the user's answer.
    case noPendingTorchRequest
    /// The instance was deinitialized.
    case deinitialized

    public var description: String {
        switch self {
        case .notInitialized: "EnQualifyVideoCall is not initialized: wait for initializeCompleted(moduleName: \"EnQualifyVideoCall\")"
        case .notInCall: "no active video call: process retries and torch answers exist only during a call"
        case .callAlreadyStarted: "a video call is already under way"
        case .retryLimitReached(let kind, let limit): "the \(kind.rawValue) retry limit (\(limit) per call) is reached"
        case .noPendingTorchRequest: "no agent torch request is waiting for the user's answer"
        case .deinitialized: "EnQualifyVideoCall was deinitialized"
        }
    }
}
