import Foundation

/// The identity-verification back office's REST endpoints (docs/protocol.md §7). Every path is
/// relative to the back office's base URL (EnQualify's `baseURL`); the reference service serves
/// them next to the ECV API.
public enum VerificationAPI {
    public static let tokenCreate = "/kyc/api/Token/Create"
    public static let sessionAdd = "/kyc/api/Session/Add"
    public static let sessionUpdate = "/kyc/api/Session/Update"
    public static let sessionClose = "/kyc/api/Session/Close"
    public static let settingsGet = "/kyc/api/Settings/Get"
    public static let integrationAdd = "/kyc/api/Integration/Add"
    public static let signingSet = "/kyc/api/Signing/Set"
    public static let signingComplete = "/kyc/api/Signing/Complete"
    /// `GET …?sessionId=` (customer token) / `POST` (agent token): the verdict.
    public static let callResult = "/kyc/api/CallResult"
    /// The header that carries the integrator's API key on `Token/Create`.
    public static let apiKeyHeader = "X-API-Key"
    public static let sessionIdQueryName = "sessionId"
    /// The acdAttributes key a verification call is dialed with: the back office then sets the
    /// call's accessibility flags from its session, whatever the DialEx says.
    public static let sessionAttribute = "verificationSession"
    /// The longest text field any of these bodies may carry (names, references, reasons…), in
    /// UTF-8 bytes; the reference back office also refuses controls, separators and bidi formatting.
    public static let maxFieldLength = 256
    /// The longest document a signing may carry, in UTF-8 bytes.
    public static let maxDocumentBytes = 16 * 1024
}

/// `POST Token/Create` (header `X-API-Key`).
public struct TokenCreateRequest: Codable, Sendable, Equatable {
    public var mobileUser: String?
    public var locale: String?
    public var countryCode: String?

    public init(mobileUser: String? = nil, locale: String? = nil, countryCode: String? = nil) {
        self.mobileUser = mobileUser
        self.locale = locale
        self.countryCode = countryCode
    }
}

public struct TokenCreateResponse: Codable, Sendable, Equatable {
    /// Presented as `Authorization: Bearer <token>` on every later request.
    public var token: String
    public var expiresInSeconds: Int

    public init(token: String, expiresInSeconds: Int) {
        self.token = token
        self.expiresInSeconds = expiresInSeconds
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        token = try container.decodeNonEmptyString(forKey: .token)
        expiresInSeconds = try container.decode(Int.self, forKey: .expiresInSeconds)
    }
}

/// The customer and the case a verification call is about (EnQualify's `SessionModelVideoCall`):
/// every field of the document, `callType` and `reference` mandatory, the defaults as written.
/// It is also the body of `POST Session/Add`, checked there field by field.
public struct SessionModelVideoCall: Codable, Sendable, Equatable {
    public var callType: String
    public var userName: String?
    public var surname: String?
    public var phone: String?
    public var email: String?
    public var identityType: String?
    public var identityNo: String?
    /// The integrator's own id for the case (mandatory); the verdict names it.
    public var reference: String
    /// The session closes itself once its call is over: the SDK sends `Session/Close` (then
    /// `sessionCloseCompleted`) right after the call's last delegate call (the verdict, or
    /// `callResultFailed`; for a call that never connected, `hangupConfirmation`, `videoCallFailed`
    /// or `sessionRoomFailed`). false: the app closes it with `closeSession()`.
    public var canAutoClose: Bool
    /// The session continues an earlier one (a customer coming back to a case). Sent as is in
    /// `Session/Add`: the back office decides what continuing means; the SDK's flow is the same.
    public var isContinue: Bool
    public var category: String?
    public var taxNumber: String?
    public var businessReference: String?
    /// The customer has special needs; `true` counts as hearing impaired for routing (see also
    /// `setHandicappedStatus(hearing:visually:)`, which says which).
    public var handicapped: Bool?

    public init(callType: String, userName: String? = nil, surname: String? = nil, phone: String? = nil, email: String? = nil,
                identityType: String? = nil, identityNo: String? = nil, reference: String, canAutoClose: Bool = false,
                isContinue: Bool = false, category: String? = nil, taxNumber: String? = nil, businessReference: String? = nil,
                handicapped: Bool? = false) {
        self.callType = callType
        self.userName = userName
        self.surname = surname
        self.phone = phone
        self.email = email
        self.identityType = identityType
        self.identityNo = identityNo
        self.reference = reference
        self.canAutoClose = canAutoClose
        self.isContinue = isContinue
        self.category = category
        self.taxNumber = taxNumber
        self.businessReference = businessReference
        self.handicapped = handicapped
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        callType = try container.decodeNonEmptyString(forKey: .callType)
        userName = try container.decodeIfPresent(String.self, forKey: .userName)
        surname = try container.decodeIfPresent(String.self, forKey: .surname)
        phone = try container.decodeIfPresent(String.self, forKey: .phone)
        email = try container.decodeIfPresent(String.self, forKey: .email)
        identityType = try container.decodeIfPresent(String.self, forKey: .identityType)
        identityNo = try container.decodeIfPresent(String.self, forKey: .identityNo)
        reference = try container.decodeNonEmptyString(forKey: .reference)
        canAutoClose = try container.decodeIfPresent(Bool.self, forKey: .canAutoClose) ?? false
        isContinue = try container.decodeIfPresent(Bool.self, forKey: .isContinue) ?? false
        category = try container.decodeIfPresent(String.self, forKey: .category)
        taxNumber = try container.decodeIfPresent(String.self, forKey: .taxNumber)
        businessReference = try container.decodeIfPresent(String.self, forKey: .businessReference)
        handicapped = try container.decodeIfPresent(Bool.self, forKey: .handicapped)
    }

    /// The text fields by name, for bounds checks.
    public var textFields: [(String, String?)] {
        [("callType", callType), ("userName", userName), ("surname", surname), ("phone", phone), ("email", email),
         ("identityType", identityType), ("identityNo", identityNo), ("reference", reference), ("category", category),
         ("taxNumber", taxNumber), ("businessReference", businessReference)]
    }
}

public struct SessionAddResponse: Codable, Sendable, Equatable {
    public var sessionId: String
    public init(sessionId: String) { self.sessionId = sessionId }
}

/// `POST Session/Update`: the accessibility flags (`setHandicappedStatus`).
public struct SessionUpdateRequest: Codable, Sendable, Equatable {
    public var sessionId: String
    public var hearingImpaired: Bool
    public var visuallyImpaired: Bool

    public init(sessionId: String, hearingImpaired: Bool, visuallyImpaired: Bool) {
        self.sessionId = sessionId
        self.hearingImpaired = hearingImpaired
        self.visuallyImpaired = visuallyImpaired
    }
}

/// `POST Session/Close`, `POST Signing/Complete`: a body naming the session only.
public struct SessionReference: Codable, Sendable, Equatable {
    public var sessionId: String
    public init(sessionId: String) { self.sessionId = sessionId }
}

/// The common success answer: `{"status": "OK"}` (`Session/Close`: `"CLOSED"`).
public struct VerificationStatusResponse: Codable, Sendable, Equatable {
    public var status: String
    public init(status: String) { self.status = status }
}

/// `GET Settings/Get?sessionId=`: what the back office configures for the session's call type.
public struct VerificationSettings: Codable, Sendable, Equatable {
    /// The ECV service the call goes through (REST, queue socket); nil: the back office's base URL.
    public var serviceUrl: String?
    /// Where rooms and signaling are; nil: `serviceUrl`.
    public var signalingUrl: String?
    public var queue: String
    public var videoWidth: Int
    public var videoHeight: Int
    public var videoCodec: String
    /// How often the customer may repeat each step in one call (`ocrRetry()`, `faceRetry()`).
    public var maxOcrRetries: Int
    public var maxFaceRetries: Int
    /// How long a flash request waits for the user's approval before it is refused.
    public var flashApprovalTimeoutMs: Int

    public init(serviceUrl: String? = nil, signalingUrl: String? = nil, queue: String = "default", videoWidth: Int = 640,
                videoHeight: Int = 480, videoCodec: String = "VP8", maxOcrRetries: Int = 3, maxFaceRetries: Int = 3,
                flashApprovalTimeoutMs: Int = 4000) {
        self.serviceUrl = serviceUrl
        self.signalingUrl = signalingUrl
        self.queue = queue
        self.videoWidth = videoWidth
        self.videoHeight = videoHeight
        self.videoCodec = videoCodec
        self.maxOcrRetries = maxOcrRetries
        self.maxFaceRetries = maxFaceRetries
        self.flashApprovalTimeoutMs = flashApprovalTimeoutMs
    }

    /// Why these settings cannot configure a call, or nil.
    public var problem: String? {
        if queue.isEmpty || queue.count > VerificationAPI.maxFieldLength { return "queue must be 1-256 characters" }
        if !(16...3840).contains(videoWidth) || !(16...2160).contains(videoHeight) { return "video size \(videoWidth)x\(videoHeight) is out of range" }
        if !["VP8", "VP9", "H264"].contains(videoCodec.uppercased()) { return "videoCodec must be VP8, VP9 or H264" }
        if !(0...20).contains(maxOcrRetries) || !(0...20).contains(maxFaceRetries) { return "retry limits must be 0-20" }
        if !(100...120_000).contains(flashApprovalTimeoutMs) { return "flashApprovalTimeoutMs must be 100-120000" }
        return nil
    }
}

/// `POST Integration/Add`: links the session to the call that carries it.
public struct IntegrationAddRequest: Codable, Sendable, Equatable {
    public var sessionId: String
    public var rtcId: String
    public init(sessionId: String, rtcId: String) {
        self.sessionId = sessionId
        self.rtcId = rtcId
    }
}

/// `POST Signing/Set`: a document the customer is asked to sign.
public struct SigningSetRequest: Codable, Sendable, Equatable {
    public var sessionId: String
    public var documentName: String
    public var document: String
    public init(sessionId: String, documentName: String, document: String) {
        self.sessionId = sessionId
        self.documentName = documentName
        self.document = document
    }
}

/// `POST CallResult` (agent token): the verdict on a call.
public struct CallResultPost: Codable, Sendable, Equatable {
    public var rtcId: String
    /// `APPROVED`, `REJECTED`, `PENDING` or another of the back office's words (1-32 of [A-Z_]).
    public var result: String
    public var description: String
    public init(rtcId: String, result: String, description: String) {
        self.rtcId = rtcId
        self.result = result
        self.description = description
    }
}

/// `GET CallResult?sessionId=` (customer token): the verdict, once posted.
public struct CallResultResponse: Codable, Sendable, Equatable {
    public var result: String
    public var description: String
    /// The session's `reference` (the integrator's own id for the case).
    public var reference: String
    public init(result: String, description: String, reference: String) {
        self.result = result
        self.description = description
        self.reference = reference
    }
}
