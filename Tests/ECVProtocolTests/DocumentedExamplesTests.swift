import ECVProtocol
import Foundation
import Testing

/// Every JSON example in docs/protocol.md decodes into its type and re-encodes to the same JSON.
@Suite("docs/protocol.md examples")
struct DocumentedExamplesTests {
    /// Decodes, re-encodes, and checks that decoding the re-encoding gives the same value.
    typealias RoundTrip = @Sendable (Data) throws -> Data

    static func roundTrip<T: Codable & Equatable & Sendable>(_ type: T.Type) -> RoundTrip {
        { data in
            let value = try ECVJSON.decode(T.self, from: data)
            let encoded = try ECVJSON.encode(value)
            let again = try ECVJSON.decode(T.self, from: encoded)
            guard again == value else { throw RoundTripMismatch(first: "\(value)", second: "\(again)") }
            return encoded
        }
    }

    struct RoundTripMismatch: Error, CustomStringConvertible {
        var first: String
        var second: String
        var description: String { "decoding the re-encoding changed the value: \(first) vs \(second)" }
    }

    static let types: [String: RoundTrip] = [
        "GetRtcIdResponse": roundTrip(GetRtcIdResponse.self),
        "DialExRequest": roundTrip(DialExRequest.self),
        "DialExResponse": roundTrip(DialExResponse.self),
        "ServiceErrorResponse": roundTrip(ServiceErrorResponse.self),
        "HangupRequest": roundTrip(HangupRequest.self),
        "HangupResponse": roundTrip(HangupResponse.self),
        "QueueInfoResponse": roundTrip(QueueInfoResponse.self),
        "QueueSocketMessage": roundTrip(QueueSocketMessage.self),
        "QueuesResponse": roundTrip(QueuesResponse.self),
        "JoinResponse": roundTrip(JoinResponse.self),
        "RoomResponse": roundTrip(RoomResponse.self),
        "PeerConnectionConfig": roundTrip(PeerConnectionConfig.self),
        "SignalingMessage": roundTrip(SignalingMessage.self),
        "ColliderCommand": roundTrip(ColliderCommand.self),
        "ColliderDelivery": roundTrip(ColliderDelivery.self),
        "AgentLoginRequest": roundTrip(AgentLoginRequest.self),
        "AgentLoginResponse": roundTrip(AgentLoginResponse.self),
        "AgentLogoutResponse": roundTrip(AgentLogoutResponse.self),
        "AgentRequest": roundTrip(AgentRequest.self),
        "AgentEvent": roundTrip(AgentEvent.self),
        // The identity-verification back office (§7).
        "TokenCreateRequest": roundTrip(TokenCreateRequest.self),
        "TokenCreateResponse": roundTrip(TokenCreateResponse.self),
        "SessionModelVideoCall": roundTrip(SessionModelVideoCall.self),
        "SessionAddResponse": roundTrip(SessionAddResponse.self),
        "SessionUpdateRequest": roundTrip(SessionUpdateRequest.self),
        "SessionReference": roundTrip(SessionReference.self),
        "VerificationStatusResponse": roundTrip(VerificationStatusResponse.self),
        "VerificationSettings": roundTrip(VerificationSettings.self),
        "IntegrationAddRequest": roundTrip(IntegrationAddRequest.self),
        "SigningSetRequest": roundTrip(SigningSetRequest.self),
        "CallResultPost": roundTrip(CallResultPost.self),
        "CallResultResponse": roundTrip(CallResultResponse.self),
        "PeerJSMessage": roundTrip(PeerJSMessage.self),
    ]

    @Test func documentIsReadableAndEveryJSONBlockIsTagged() throws {
        let contents = try ProtocolDocument.load()
        #expect(contents.examples.count >= 60, "expected the document's examples, found \(contents.examples.count)")
        #expect(contents.untaggedJSONBlockLines.isEmpty,
                "JSON blocks without an <!-- example: Type --> marker at lines \(contents.untaggedJSONBlockLines)")
    }

    @Test func everyTaggedTypeIsKnownAndEveryTypeHasAnExample() throws {
        let tags = Set(try ProtocolDocument.load().examples.map(\.typeName))
        #expect(tags.subtracting(Self.types.keys).isEmpty, "unknown example types: \(tags.subtracting(Self.types.keys))")
        #expect(Set(Self.types.keys).subtracting(tags).isEmpty,
                "types without a documented example: \(Set(Self.types.keys).subtracting(tags))")
    }

    @Test("every message kind is documented")
    func everyMessageKindIsDocumented() throws {
        let examples = try ProtocolDocument.load().examples
        func kinds<T: Decodable>(_ type: T.Type, tag: String, _ kind: (T) -> String) -> Set<String> {
            Set(examples.filter { $0.typeName == tag }.compactMap { try? ECVJSON.decode(T.self, from: $0.json) }.map(kind))
        }
        #expect(kinds(QueueSocketMessage.self, tag: "QueueSocketMessage") { $0.kind.rawValue }
            == Set(QueueSocketMessage.Kind.allCases.map(\.rawValue)))
        #expect(kinds(AgentEvent.self, tag: "AgentEvent") { $0.kind.rawValue }
            == Set(AgentEvent.Kind.allCases.map(\.rawValue)))
        #expect(kinds(AgentRequest.self, tag: "AgentRequest") { $0.command.kind.rawValue }
            == Set(AgentCommand.Kind.allCases.map(\.rawValue)))
        #expect(kinds(SignalingMessage.self, tag: "SignalingMessage") { $0.kind.rawValue }
            == Set(SignalingMessage.Kind.allCases.map(\.rawValue)))
        #expect(kinds(QueueInfoResponse.self, tag: "QueueInfoResponse") { $0.state.rawValue }
            == Set(WaitState.allCases.map(\.rawValue)))
        #expect(kinds(PeerJSMessage.self, tag: "PeerJSMessage") { $0.type.rawValue }
            == Set(PeerJSMessageType.allCases.map(\.rawValue)))
    }

    @Test(arguments: ProtocolDocument.contentsOrEmpty.examples)
    func exampleRoundTrips(_ example: ProtocolDocument.Example) throws {
        let roundTrip = try #require(Self.types[example.typeName], "no decoder for \(example.typeName)")
        let original = Data(example.json.utf8)
        let encoded = try roundTrip(original)
        let expected = try JSONValue.parse(original).normalized
        let actual = try JSONValue.parse(encoded).normalized
        #expect(actual == expected, "re-encoded as \(String(decoding: encoded, as: UTF8.self))")
    }
}
