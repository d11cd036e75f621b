import ECV
import Testing

// What the caller's events carry as `objData`, cast by name in a file that imports the ECV product
// alone: this file compiles only while ECV re-exports each of those types.

/// What an app's handler reads out of the events that carry wire values.
func describeEventPayload(_ event: VideoCallEvent) -> String? {
    switch event.objData {
    case let joined as JoinParameters: joined.isInitiator ? "initiator" : "answerer"
    case let message as SignalingMessage:
        switch message {
        case .offer: "offer"
        case .answer: "answer"
        default: "other"
        }
    case let error as ErrorObject: error.name.rawValue
    default: nil
    }
}

@Test func anOfferEventsPayloadIsNamedByTheApp() {
    let event = VideoCallEvent(type: .GotOffer, detail: nil, objData: SignalingMessage.offer(sdp: "v=0"), data: [:])
    #expect(describeEventPayload(event) == "offer")
    #expect(describeEventPayload(VideoCallEvent(type: .Hangup, detail: nil, objData: nil, data: [:])) == nil)
}
