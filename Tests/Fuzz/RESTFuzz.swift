// libFuzzer target `rest`: every REST body of the ECV service, the agent login and the room
// server's answers, in both directions (the service decodes requests, the SDK and the agent bot
// decode answers). Property: refusals are ProtocolErrors, whatever decodes survives
// decode → encode → decode unchanged with byte-stable encoding, and an rtcId the service accepts
// travels in URLs unescaped.
import ECVProtocol
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzREST(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = fuzzData(data, size)
    // Requests the service decodes.
    if let dial = roundTrip(DialExRequest.self, bytes), dial.rtcId.isEmpty { fatalError("DialEx with an empty rtcId") }
    if let hangup = roundTrip(HangupRequest.self, bytes), hangup.rtcId.isEmpty { fatalError("Hangup with an empty rtcId") }
    roundTrip(AgentLoginRequest.self, bytes)
    // Answers the SDK and the agent bot decode.
    if let id = roundTrip(GetRtcIdResponse.self, bytes), id.rtcId.isEmpty { fatalError("an empty rtcId decoded") }
    roundTrip(DialExResponse.self, bytes)
    roundTrip(HangupResponse.self, bytes)
    if let info = roundTrip(QueueInfoResponse.self, bytes) {
        if info.state == .transferred, info.newRtcId == nil { fatalError("transferred without newRtcId") }
        if let position = info.displayPosition, position <= 0 { fatalError("display position \(position)") }
        if let minutes = info.ewtMinutes, minutes < 0 { fatalError("negative wait \(minutes) min") }
        guard info.withoutQueueFigures.position == nil, info.withoutQueueFigures.ewtSeconds == nil else { fatalError("figures kept") }
    }
    roundTrip(QueuesResponse.self, bytes)
    roundTrip(ServiceErrorResponse.self, bytes)
    roundTrip(AgentLoginResponse.self, bytes)
    roundTrip(AgentLogoutResponse.self, bytes)
    roundTrip(RoomResponse.self, bytes)
    // The verification back office's bodies (docs/protocol.md §7), both directions.
    roundTrip(TokenCreateRequest.self, bytes)
    if let token = roundTrip(TokenCreateResponse.self, bytes), token.token.isEmpty { fatalError("an empty token decoded") }
    if let session = roundTrip(SessionModelVideoCall.self, bytes), session.callType.isEmpty || session.reference.isEmpty {
        fatalError("a session without callType or reference decoded")
    }
    roundTrip(SessionAddResponse.self, bytes)
    roundTrip(SessionUpdateRequest.self, bytes)
    roundTrip(SessionReference.self, bytes)
    roundTrip(VerificationStatusResponse.self, bytes)
    if let settings = roundTrip(VerificationSettings.self, bytes) { _ = settings.problem }
    roundTrip(IntegrationAddRequest.self, bytes)
    roundTrip(SigningSetRequest.self, bytes)
    roundTrip(CallResultPost.self, bytes)
    roundTrip(CallResultResponse.self, bytes)
    // rtcIds travel in URL paths and queries: a valid one needs no escaping, and escaping leaves
    // no separator in anything else (short texts only: percent-encoding is slow on Linux).
    let text = String(decoding: bytes, as: UTF8.self)
    if ECVAPI.isValidRtcId(text) {
        guard ECVAPI.joinPath(room: text) == "/join/" + text,
              ECVAPI.appendingRtcId(text, to: "?rtcId=") == "?rtcId=" + text else { fatalError("a valid rtcId was escaped") }
    } else if text.utf8.count <= 256, ECVAPI.messagePath(room: text, client: text).dropFirst("/message/".count).contains(where: { "?#".contains($0) })
                || ECVAPI.joinPath(room: text).dropFirst("/join/".count).contains("/") {
        fatalError("a room name left a path separator unescaped")
    }
    return 0
}
