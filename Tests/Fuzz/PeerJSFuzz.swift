// libFuzzer target `peerjs`: what PeerJS clients and servers send (docs/protocol.md §7): any frame
// as a message, as a client's message, and its payload as an offer/answer or a candidate.
// Properties: a decoded message re-encodes to a message that decodes to the same value; a client
// frame (PeerJSClientFrame) is never refused, a relayed one keeps no `src` and has a peer id as `dst`; payloads stay within bounds.
import ECVProtocol
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPeerJS(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let message = decoded(text) {
        roundTrips(message)
        if let payload = try? PeerJSDescriptionPayload(message.payload) { // refused payloads are fine
            if payload.sdp.isEmpty || payload.sdp.utf8.count > PeerJSLimits.maxSDPBytes { fatalError("an SDP out of bounds decoded") }
            guard (try? PeerJSDescriptionPayload(payload.value)) == payload else { fatalError("a description payload changed in a round trip") }
        }
        if let candidate = try? PeerJSCandidatePayload(message.payload) { // refused payloads are fine
            if candidate.candidate.utf8.count > PeerJSLimits.maxCandidateBytes || !(0...64).contains(candidate.sdpMLineIndex) {
                fatalError("a candidate out of bounds decoded")
            }
            guard (try? PeerJSCandidatePayload(candidate.value)) == candidate else { fatalError("a candidate payload changed in a round trip") }
        }
    }
    // A client's frame as the server reads it: never refused, always within bounds where relayed.
    switch PeerJSClientFrame(text: text) {
    case .relay(let message):
        guard message.src == nil, message.type.isClientMessage, message.type != .heartbeat,
              let dst = message.dst, PeerJSLimits.isValidId(dst) else { fatalError("a relayed client message kept src, or has no peer id as dst") }
        if let payload = message.payload, payload.depth > PeerJSLimits.maxPayloadDepth || payload.nodeCount > PeerJSLimits.maxPayloadNodes {
            fatalError("a payload beyond the bounds is relayed")
        }
    case .undeliverable(let type, let dst, let reason):
        if reason.isEmpty || dst.utf8.count > PeerJSLimits.maxIdLength * 4 || !type.isClientMessage { fatalError("an undeliverable frame without reason or bounded dst") }
    case .ignored(let reason):
        if reason.isEmpty { fatalError("an ignored frame without a reason") }
    case .heartbeat, .leaveServer:
        break
    }
    if let ids = try? ECVJSON.peerIds(from: Data(text.utf8)), ids.contains(where: { !PeerJSLimits.isValidId($0) }) { // refused lists are fine
        fatalError("a peer list with a bad id decoded")
    }
    return 0
}

private func decoded(_ text: String) -> PeerJSMessage? {
    do { return try PeerJSMessage(jsonString: text) } catch {
        if error.description.isEmpty { fatalError("a refusal without a description") }
        return nil
    }
}

private func roundTrips(_ message: PeerJSMessage) {
    if let payload = message.payload, payload.depth > PeerJSLimits.maxPayloadDepth || payload.nodeCount > PeerJSLimits.maxPayloadNodes {
        fatalError("a payload beyond the bounds decoded")
    }
    let encoded: String
    do { encoded = try message.jsonString() } catch { fatalError("a decoded message does not encode: \(error)") }
    guard encoded.utf8.count <= PeerJSLimits.maxMessageBytes * 2 else { return } // escaping may grow it past the frame bound
    let again: PeerJSMessage
    do { again = try PeerJSMessage(jsonString: encoded) } catch {
        guard encoded.utf8.count > PeerJSLimits.maxMessageBytes else { fatalError("its own encoding does not decode: \(error)\n\(encoded)") }
        return
    }
    guard again == message else { fatalError("a message changed in a round trip:\n\(message)\n\(again)") }
}
