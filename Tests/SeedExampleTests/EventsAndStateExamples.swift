import ECV
import Foundation
import Testing

// iOS SDK guide, "Events and State Management".

/// "Subscribing to Events".
func subscribeToEvents(sdk: ECVSdk, call: VideoCall?) {
    sdk.modules.onCallEvent.append { (videoCall: VideoCall, newEvent: VideoCallEvent, lastEvent: VideoCallEvent) in
        if(videoCall.rtcId != call?.rtcId){
            return // Making sure we only catch the events related to the current call. // comment this code to catch all calls' events
        }

        if(newEvent.type == .Error){
            // Handle Error event
        }
        else if(newEvent.type == .AgentConnected) {
            // Handle AgentConnected event
        }
        else {
            print("From ECVModules?.onCallEvent: \(newEvent)")
        }
    }
}

@Suite struct EventsAndStateExamples {
    /// "Event Structure (VideoCallEvent)": the key fields.
    @Test func eventStructure() {
        let event = VideoCallEvent(type: .GotRtcId, detail: "rtc-1", data: ["k": "v"])
        #expect(event.type == .GotRtcId && event.detail == "rtc-1" && event.data == ["k": "v"])
        #expect(event.objData == nil && event.createdAt.timeIntervalSinceNow <= 0)
    }

    /// "State Properties" on a call that has not been dialed. Adapted: the list's Boolean
    /// `agentConnected` is `isAgentConnected`; `agentConnected` is the awaitable task of the Usage
    /// Guide (`await call.agentConnected?.value`). `dialResponse` is `[String: any Sendable]?`.
    @Test func stateProperties() async throws {
        let sdk = try offlineSDK()
        let videoCall = try #require(await sdk.createVideoCall(rtcId: "state-1"))
        #expect(videoCall.rtcId == "state-1")
        #expect(videoCall.dialResponse == nil, "only after DialSuccess")
        #expect(!videoCall.isAgentConnected && videoCall.agentConnected != nil)
        #expect(videoCall.webRtcConnection == nil, "only after connect()")
    }
}
