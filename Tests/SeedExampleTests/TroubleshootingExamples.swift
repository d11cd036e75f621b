import ECV
import Testing

// iOS SDK guide, "Events" (error data) and "Troubleshooting" (the shared instance).

/// "Error (During Init/Dial)": "event.error contains the ECVError … Check error.error for specific
/// ErrorTypes like CALL_NOT_INITIALIZED, DIAL_FAILED", and "Error (During Queue)":
/// "QUEUE_SOCKET_ERROR", "WAIT_FOR_ROOM_FAILED". What the app would show for each.
func messageForErrorEvent(_ newEvent: VideoCallEvent) -> String? {
    guard newEvent.type == .Error, let error = newEvent.error else { return nil }
    switch error.error.name {
    case .CALL_NOT_INITIALIZED: return "not initialized"
    case .DIAL_FAILED: return "dial failed"
    case .QUEUE_SOCKET_ERROR: return "queue socket error"
    case .WAIT_FOR_ROOM_FAILED: return "wait for room failed"
    default: return "other: \(error.error.message)"
    }
}

@Suite(.serialized) struct TroubleshootingExamples {
    /// The guide's names and the listed ones are the same values, both ways.
    @Test func theEventsSectionsErrorNames() {
        let dialFailed = VideoCallEvent(type: .Error, objData: ErrorObject(name: .ERROR_DIALING, message: "500"), data: ["name": "ERROR_DIALING"])
        #expect(messageForErrorEvent(dialFailed) == "dial failed")
        #expect(messageForErrorEvent(VideoCallEvent(type: .Error, objData: ErrorObject(name: .QUEUE_SOCKET_CLOSED))) == "queue socket error")
        #expect(messageForErrorEvent(VideoCallEvent(type: .Error, objData: ErrorObject(name: .ERROR_WAITING_FOR_ROOM))) == "wait for room failed")
        #expect(messageForErrorEvent(VideoCallEvent(type: .Error, objData: ErrorObject(name: .CALL_NOT_INITIALIZED))) == "not initialized")
        #expect(messageForErrorEvent(VideoCallEvent(type: .Error, objData: ErrorObject(name: .HANGUP_FAILED, message: "x"))) == "other: x")
        #expect(VideoCallEvent(type: .GotRtcId, objData: ErrorObject()).error == nil, "only an Error event carries one")
        #expect(ErrorName(named: "DIAL_FAILED") == .ERROR_DIALING && ErrorName(named: "ERROR_DIALING") == .DIAL_FAILED)
        #expect(ErrorName(named: "QUEUE_SOCKET_ERROR") == .QUEUE_SOCKET_CLOSED && ErrorName(named: "WAIT_FOR_ROOM_FAILED") == .ERROR_WAITING_FOR_ROOM)
        #expect(ErrorName(named: "NO_SUCH_ERROR") == nil)
        #expect(ErrorName.DIAL_FAILED.rawValue == "ERROR_DIALING", "events carry the listed name")
    }

    /// A real call without an rtcId: the Error event's `error` is the call's `lastError`.
    @Test func anErrorEventCarriesTheCallsLastError() async throws {
        let sdk = try offlineSDK()
        let call = try #require(await sdk.createVideoCall(rtcId: ""))
        let events = call.events()
        await call.start()
        var iterator = events.makeAsyncIterator()
        var error: ECVError?
        while error == nil, let event = await iterator.next() { error = event.error }
        #expect(error?.error === call.lastError && messageForErrorEvent(VideoCallEvent(type: .Error, objData: error?.error)) == "not initialized")
    }

    /// "SDK Not Initialized: Ensure ECVSdk.shared.initialize(...) is called before accessing any
    /// SDK functionality."
    @Test func theSharedInstance() async throws {
        let config = ECVSdkConfiguration(name: "Shared", serviceUrl: "https://ecv.example.com")
        if !ECVSdk.shared.isInitialized {
            #expect(await ECVSdk.shared.createVideoCall(rtcId: "before") == nil, "nothing before initialize")
        }
        let sdk = try ECVSdk.shared.initialize(config: config)
        #expect(ECVSdk.shared.sdk === sdk && ECVSdk.shared.modules === sdk.modules && sdk.instanceName == "Shared")
        let call = try #require(await ECVSdk.shared.createVideoCall(rtcId: "shared-1"))
        #expect(ECVSdk.shared.getVideoCall(rtcId: "shared-1") === call)
        // A pin it cannot honour is refused, and the working instance stays.
        var pinned = config
        pinned.pinnedCertificates = ["sha256/not-a-pin"]
        #expect(throws: ECVConfigurationError.self) { try ECVSdk.shared.initialize(config: pinned) }
        #expect(ECVSdk.shared.sdk === sdk)
    }
}
