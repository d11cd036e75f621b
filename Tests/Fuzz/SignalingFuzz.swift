// libFuzzer target `signaling`: what peers exchange through the AppRTC room server and the
// collider: the /join answer (with its embedded messages), the payloads (offer, answer,
// candidate, bye), collider commands and deliveries. Property: round trips as in RoundTrip.swift,
// and a payload carried inside another message (messages[], msg) is the payload decoded alone.
import ECVProtocol
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSignaling(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = fuzzData(data, size)
    if let message = roundTrip(SignalingMessage.self, bytes) {
        check(message)
        // The same payload as the collider carries it, and as the room server stores it.
        let text = String(decoding: bytes, as: UTF8.self)
        let relayed = try? ECVJSON.encode(["cmd": "send", "msg": text])
        if let relayed, let command = roundTrip(ColliderCommand.self, relayed) {
            guard command == .send(message) else { fatalError("collider send changed the payload: \(command)") }
        } else {
            fatalError("a payload that decodes alone does not decode inside a collider send")
        }
        if let delivered = try? ECVJSON.encode(["msg": text, "error": ""]),
           roundTrip(ColliderDelivery.self, delivered) != .message(message) {
            fatalError("a collider delivery changed the payload")
        }
        guard (try? SignalingMessage(jsonString: message.jsonString())) == message else { fatalError("jsonString round trip") }
    }
    if let command = roundTrip(ColliderCommand.self, bytes) {
        switch command {
        case .register(let room, let client): if room.isEmpty || client.isEmpty { fatalError("register with an empty id") }
        case .send(let message): check(message)
        }
    }
    if let delivery = roundTrip(ColliderDelivery.self, bytes) {
        switch delivery {
        case .message(let message): check(message)
        case .failure(let reason): if reason.isEmpty { fatalError("a failure without a reason") }
        }
    }
    if let join = roundTrip(JoinResponse.self, bytes) {
        guard (join.result == .success) == (join.params != nil) else { fatalError("params on \(join.result)") }
        if let params = join.params {
            if params.roomId.isEmpty || params.clientId.isEmpty || params.wssUrl.isEmpty || params.wssPostUrl.isEmpty {
                fatalError("a join answer with an empty id or URL")
            }
            params.messages.forEach(check)
        }
    }
    roundTrip(RoomResponse.self, bytes)
    return 0
}

/// What the peer connection relies on in a decoded payload.
private func check(_ message: SignalingMessage) {
    switch message {
    case .offer(let sdp), .answer(let sdp): if sdp.isEmpty { fatalError("an empty SDP decoded") }
    case .candidate(let candidate):
        if candidate.sdpMLineIndex < 0 || candidate.candidate.isEmpty { fatalError("candidate \(candidate)") }
    case .bye: break
    }
}
