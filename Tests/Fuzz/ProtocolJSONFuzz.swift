// libFuzzer target: every wire message the SDK, the service and the agent bot decode, from
// arbitrary bytes. Decoding may fail (that is a ProtocolError); it must never crash, hang or
// leak, and whatever decodes must encode again. Built with the ECVProtocol sources by `make fuzz`.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzProtocolJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(UnsafeBufferPointer(start: data, count: size))
    func check<T: Codable>(_ type: T.Type) {
        guard let value = try? ECVJSON.decode(T.self, from: bytes) else { return }
        guard (try? ECVJSON.encode(value)) != nil else { fatalError("\(T.self) decoded but does not encode") }
    }
    check(DialExRequest.self)
    check(DialExResponse.self)
    check(HangupRequest.self)
    check(GetRtcIdResponse.self)
    check(QueueInfoResponse.self)
    check(QueueSocketMessage.self)
    check(QueuesResponse.self)
    check(ServiceErrorResponse.self)
    check(AgentLoginRequest.self)
    check(AgentLoginResponse.self)
    check(AgentRequest.self)
    check(AgentEvent.self)
    check(JoinResponse.self)
    check(RoomResponse.self)
    check(SignalingMessage.self)
    check(ColliderCommand.self)
    check(ColliderDelivery.self)
    let text = String(decoding: bytes, as: UTF8.self)
    _ = DataChannelCommand(parsing: text).description
    _ = ECVAPI.isValidRtcId(text)
    return 0
}
