import Foundation

/// A text frame a client sent to the peer server, read as peerjs-server 1.0.2 reads it
/// (docs/protocol.md §8.3): it relays what it relays, ignores what it ignores, and never closes a
/// socket over a message. Where ECVKit's bounds stop a message that peerjs-server would relay (a
/// payload too deep or too large, a destination that cannot be a peer id), the message is not
/// delivered and its sender is told so with `EXPIRE`, as for a peer that never came.
public enum PeerJSClientFrame: Sendable, Equatable {
    /// Nothing to do: not JSON, not an object, no `type`, a type the server has no handler for
    /// (peerjs-py's first frame `{"ping":"once"}`, a server's type), or a relayed type without
    /// `dst` (peerjs-server's transmission handler drops it).
    case ignored(reason: String)
    case heartbeat
    /// `LEAVE` without `dst`: the sender leaves the server.
    case leaveServer
    /// `OFFER`, `ANSWER`, `CANDIDATE`, `LEAVE` or `EXPIRE` for `dst`, its `src` unset (the server sets it).
    case relay(PeerJSMessage)
    /// A relayed type for `dst` that ECVKit's bounds keep from delivery.
    case undeliverable(type: PeerJSMessageType, dst: String, reason: String)

    /// Reads one frame. Never throws: every frame is one of the cases.
    public init(text: String) {
        guard text.utf8.count <= PeerJSLimits.maxMessageBytes else {
            self = .ignored(reason: "a frame over \(PeerJSLimits.maxMessageBytes) bytes")
            return
        }
        let loose: Loose
        do { loose = try JSONDecoder().decode(Loose.self, from: Data(text.utf8)) } catch {
            self = .ignored(reason: "not a JSON object")
            return
        }
        guard let name = loose.type else { self = .ignored(reason: "no type"); return }
        guard let type = PeerJSMessageType(rawValue: name), type.isClientMessage else {
            self = .ignored(reason: "type \"\(name.prefix(40))\" has no handler")
            return
        }
        if type == .heartbeat { self = .heartbeat; return }
        guard let dst = loose.dst else {
            self = type == .leave ? .leaveServer : .ignored(reason: "\(type.rawValue) without dst")
            return
        }
        guard PeerJSLimits.isValidId(dst) else {
            self = .undeliverable(type: type, dst: String(decoding: dst.utf8.prefix(PeerJSLimits.maxIdLength), as: UTF8.self), reason: "\"\(dst.prefix(80))\" is not a peer id")
            return
        }
        switch loose.payload {
        case .refused(let reason):
            self = .undeliverable(type: type, dst: dst, reason: reason)
        case .value(let payload):
            self = .relay(PeerJSMessage(type: type, dst: dst, payload: payload))
        case .absent:
            self = .relay(PeerJSMessage(type: type, dst: dst))
        }
    }

    /// The fields the server reads; anything of another kind counts as absent, as in JavaScript.
    private struct Loose: Decodable {
        enum Payload { case absent, value(PeerJSValue), refused(String) }
        var type: String?
        var dst: String?
        var payload: Payload = .absent

        private enum CodingKeys: String, CodingKey { case type, dst, payload }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            // A type or dst that is not a string is no type or dst (peerjs-server finds no handler, no client).
            type = try? container.decodeIfPresent(String.self, forKey: .type)
            // As above: a dst that is not a string names nobody.
            dst = try? container.decodeIfPresent(String.self, forKey: .dst)
            guard container.contains(.payload) else { return }
            do {
                let value = try container.decode(PeerJSValue.self, forKey: .payload)
                if value.depth > PeerJSLimits.maxPayloadDepth {
                    payload = .refused("its payload nests deeper than \(PeerJSLimits.maxPayloadDepth)")
                } else if value.nodeCount > PeerJSLimits.maxPayloadNodes {
                    payload = .refused("its payload has more than \(PeerJSLimits.maxPayloadNodes) values")
                } else {
                    payload = .value(value)
                }
            } catch {
                payload = .refused("its payload is not JSON this server relays")
            }
        }
    }
}
