import ECVProtocol
import Foundation
import Testing

/// Bad input is refused with an error naming the field at fault, never a crash or a silent default.
@Suite("Malformed input")
struct MalformedInputTests {
    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var decode: @Sendable () throws(ProtocolError) -> Void
        var expected: ProtocolError
        var description: String { name }
    }

    static func decoding<T: Decodable & Sendable>(_ type: T.Type, _ json: String) -> @Sendable () throws(ProtocolError) -> Void {
        { () throws(ProtocolError) in _ = try ECVJSON.decode(T.self, from: json) }
    }

    static func field(_ error: ProtocolError) -> String? { error.field }

    static let missing: [Case] = [
        Case(name: "DialEx without rtcId",
             decode: decoding(DialExRequest.self, #"{"callerName":"J"}"#), expected: .missingField("rtcId")),
        Case(name: "DialEx with null callerName",
             decode: decoding(DialExRequest.self, #"{"rtcId":"r","callerName":null}"#), expected: .missingField("callerName")),
        Case(name: "transferred without newRtcId",
             decode: decoding(QueueInfoResponse.self, #"{"rtcId":"r","state":"transferred"}"#),
             expected: .missingField("newRtcId")),
        Case(name: "SUCCESS join without params",
             decode: decoding(JoinResponse.self, #"{"result":"SUCCESS"}"#), expected: .missingField("params")),
        Case(name: "pc_config without iceServers",
             decode: decoding(JoinResponse.self, joinJSON(pcConfig: #"{\"bundlePolicy\":\"max-bundle\"}"#)),
             expected: .missingField("params.pc_config.iceServers")),
        Case(name: "transfer command without target",
             decode: decoding(AgentRequest.self, #"{"type":"transfer","rtcId":"r"}"#), expected: .missingField("target")),
        Case(name: "offer without priority",
             decode: decoding(AgentEvent.self,
                              #"{"type":"offer","rtcId":"r","interactionId":"i","callerName":"c","queue":"q","timeoutSeconds":15}"#),
             expected: .missingField("priority")),
        Case(name: "candidate without label",
             decode: decoding(SignalingMessage.self, #"{"type":"candidate","id":"0","candidate":"candidate:1"}"#),
             expected: .missingField("label")),
    ]

    @Test(arguments: missing)
    func missingFieldsAreNamed(_ testCase: Case) {
        #expect(throws: testCase.expected) { try testCase.decode() }
    }

    /// (document, type, the field the error must name)
    static let invalid: [Case] = [
        Case(name: "attribute value that is a number",
             decode: decoding(DialExRequest.self, #"{"rtcId":"r","callerName":"c","attributes":{"priority":5}}"#),
             expected: .invalidValue(field: "attributes.priority", reason: "")),
        Case(name: "empty rtcId", decode: decoding(DialExRequest.self, #"{"rtcId":"","callerName":"c"}"#),
             expected: .invalidValue(field: "rtcId", reason: "")),
        Case(name: "unknown wait state", decode: decoding(QueueInfoResponse.self, #"{"rtcId":"r","state":"queued"}"#),
             expected: .invalidValue(field: "state", reason: "")),
        Case(name: "position as a string",
             decode: decoding(QueueInfoResponse.self, #"{"rtcId":"r","state":"wait","position":"3"}"#),
             expected: .invalidValue(field: "position", reason: "")),
        Case(name: "pc_config that is not JSON",
             decode: decoding(JoinResponse.self, joinJSON(pcConfig: "iceServers: none")),
             expected: .invalidValue(field: "params.pc_config", reason: "")),
        Case(name: "ICE url with an http scheme",
             decode: decoding(JoinResponse.self, joinJSON(pcConfig: #"{\"iceServers\":[{\"urls\":[\"http://x\"]}]}"#)),
             expected: .invalidValue(field: "params.pc_config.iceServers[0].urls[0]", reason: "")),
        Case(name: "stored message of an unknown type",
             decode: decoding(JoinResponse.self, joinJSON(messages: [#"{\"type\":\"bye\"}"#, #"{\"type\":\"remove-candidates\"}"#])),
             expected: .invalidValue(field: "params.messages[1].type", reason: "")),
        Case(name: "stored message that is not a string",
             decode: decoding(JoinResponse.self, joinJSON(messages: [#"{"type":"bye"}"#])),
             expected: .invalidValue(field: "params.messages[0]", reason: "")),
        Case(name: "is_initiator yes", decode: decoding(JoinResponse.self, joinJSON(initiator: #""yes""#)),
             expected: .invalidValue(field: "params.is_initiator", reason: "")),
        Case(name: "unknown room result", decode: decoding(JoinResponse.self, #"{"result":"BUSY"}"#),
             expected: .invalidValue(field: "result", reason: "")),
        Case(name: "candidate label as a string",
             decode: decoding(SignalingMessage.self, #"{"type":"candidate","label":"0","id":"0","candidate":"candidate:1"}"#),
             expected: .invalidValue(field: "label", reason: "")),
        Case(name: "negative candidate label",
             decode: decoding(SignalingMessage.self, #"{"type":"candidate","label":-1,"id":"0","candidate":"candidate:1"}"#),
             expected: .invalidValue(field: "label", reason: "")),
        Case(name: "offer without SDP text", decode: decoding(SignalingMessage.self, #"{"type":"offer","sdp":""}"#),
             expected: .invalidValue(field: "sdp", reason: "")),
        Case(name: "collider send whose msg is not JSON",
             decode: decoding(ColliderCommand.self, #"{"cmd":"send","msg":"hello"}"#),
             expected: .invalidValue(field: "msg", reason: "")),
        Case(name: "collider command unknown", decode: decoding(ColliderCommand.self, #"{"cmd":"join"}"#),
             expected: .invalidValue(field: "cmd", reason: "")),
        Case(name: "queue socket push of unknown type",
             decode: decoding(QueueSocketMessage.self, #"{"type":"queued","rtcId":"r"}"#),
             expected: .invalidValue(field: "type", reason: "")),
        Case(name: "transfer target with both keys",
             decode: decoding(QueueSocketMessage.self,
                              #"{"type":"transfer_pending","rtcId":"r","target":{"queue":"q","agentId":"a"}}"#),
             expected: .invalidValue(field: "target", reason: "")),
        Case(name: "agent command unknown", decode: decoding(AgentRequest.self, #"{"type":"hold","rtcId":"r"}"#),
             expected: .invalidValue(field: "type", reason: "")),
        Case(name: "agent state unknown",
             decode: decoding(AgentEvent.self, #"{"type":"agent_state","agentId":"a","state":"away","queues":[]}"#),
             expected: .invalidValue(field: "state", reason: "")),
    ]

    @Test(arguments: invalid)
    func invalidValuesNameTheirField(_ testCase: Case) {
        do {
            try testCase.decode()
            Issue.record("decoding succeeded")
        } catch {
            guard case .invalidValue(let field, let reason) = error else {
                Issue.record("expected an invalid value, got \(error)")
                return
            }
            #expect(field == testCase.expected.field)
            #expect(!reason.isEmpty)
        }
    }

    @Test func unknownEnumValuesListWhatIsAllowed() {
        #expect {
            _ = try ECVJSON.decode(QueueInfoResponse.self, from: #"{"rtcId":"r","state":"queued"}"#)
        } throws: { error in
            "\(error)".contains("\"queued\"") && "\(error)".contains("\"not found\"")
        }
    }

    @Test(arguments: ["", "not json", "[1,2]", "\"text\"", "{\"rtcId\":", "null"])
    func documentsThatAreNotObjectsAreMalformed(_ text: String) {
        #expect {
            _ = try ECVJSON.decode(DialExRequest.self, from: text)
        } throws: { error in
            guard let error = error as? ProtocolError, case .malformedJSON = error else { return false }
            return error.field == nil
        }
    }

    // MARK: Accepted variants

    @Test func dialExMinimalFormUsesDocumentedDefaults() throws {
        let request = try ECVJSON.decode(DialExRequest.self, from: #"{"rtcId":"r","callerName":"c","queue":null}"#)
        #expect(request == DialExRequest(rtcId: "r", callerName: "c"))
    }

    @Test func iceServerAcceptsASingleURLStringAndTheLegacyKey() throws {
        let single = try ECVJSON.decode(ICEServer.self, from: #"{"urls":"stun:h:1"}"#)
        #expect(single.urls == ["stun:h:1"])
        let legacy = try ECVJSON.decode(ICEServer.self, from: #"{"url":"turn:h:1","username":"u","credential":"p"}"#)
        #expect(legacy == ICEServer(urls: ["turn:h:1"], username: "u", credential: "p"))
        #expect(legacy.isTURN)
        #expect(try ECVJSON.encodeString(legacy) == #"{"credential":"p","urls":["turn:h:1"],"username":"u"}"#)
    }

    @Test func joinAcceptsBooleanInitiatorAndIgnoresParamsOfFailures() throws {
        let join = try ECVJSON.decode(JoinResponse.self, from: Self.joinJSON(initiator: "true"))
        #expect(join.params?.isInitiator == true)
        #expect(join.params?.messages == [])
        let full = try ECVJSON.decode(JoinResponse.self, from: #"{"result":"FULL","params":{}}"#)
        #expect(full == JoinResponse(result: .full))
    }

    @Test func joinMessagesDecodeInOrder() throws {
        let join = try ECVJSON.decode(JoinResponse.self, from: Self.joinJSON(messages: [
            #"{\"type\":\"offer\",\"sdp\":\"v=0\"}"#,
            #"{\"type\":\"candidate\",\"label\":1,\"id\":\"audio1\",\"candidate\":\"candidate:9\"}"#,
        ]))
        #expect(join.params?.messages == [
            .offer(sdp: "v=0"),
            .candidate(ICECandidate(sdpMLineIndex: 1, sdpMid: "audio1", candidate: "candidate:9")),
        ])
    }

    @Test func unknownFieldsAreIgnored() throws {
        let message = try ECVJSON.decode(QueueSocketMessage.self,
                                         from: #"{"type":"call_ended","rtcId":"r","reason":"NEW_REASON","extra":[1]}"#)
        #expect(message == .callEnded(rtcId: "r", reason: "NEW_REASON"))
        #expect(message.isTerminal)
    }

    @Test func signalingMessageStringFormRoundTrips() throws {
        let candidate = SignalingMessage.candidate(ICECandidate(sdpMLineIndex: 0, sdpMid: "0", candidate: "candidate:1 1 UDP 1 127.0.0.1 9 typ host"))
        let text = try candidate.jsonString()
        #expect(text == #"{"candidate":"candidate:1 1 UDP 1 127.0.0.1 9 typ host","id":"0","label":0,"type":"candidate"}"#)
        #expect(try SignalingMessage(jsonString: text) == candidate)
        #expect(throws: ProtocolError.self) { try SignalingMessage(jsonString: "{}") }
    }

    /// A join answer with the given pieces spliced in (raw JSON text, already escaped for a string).
    static func joinJSON(initiator: String = #""false""#, messages: [String] = [],
                         pcConfig: String = #"{\"iceServers\":[]}"#) -> String {
        let list = messages.map { $0.hasPrefix("{\\") ? "\"\($0)\"" : $0 }.joined(separator: ",")
        return #"{"result":"SUCCESS","params":{"room_id":"r","client_id":"1","is_initiator":"# + initiator
            + #","messages":["# + list + #"],"wss_url":"ws://h/ws","wss_post_url":"http://h","pc_config":""#
            + pcConfig + #""}}"#
    }
}
