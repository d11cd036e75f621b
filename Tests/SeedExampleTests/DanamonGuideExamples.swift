import ECV
import Synchronization
import Testing

// Danamon Enhancement guide: "Queue Position and Estimated Wait Time", "Attached data on the
// create call page" and "Hold and Resume". Not here: the SwiftUI layouts ("Render it", "Render
// the overlay last", `HoldOverlayView`).

/// "Per-call override".
func overrideTheQueueModeForOneCall(sdk: ECVSdk, params: DialCallParameters) async {
    let call = await sdk.createVideoCall()
    call?.useQueueSocketOverride = false   // this call: no socket
    call?.useQueueInfoOverride = true      // this call: queue info polling
    await call?.start(dialCallParameters: params)
}

/// "Listen for the event". Adapted: Swift wants a statement in every `case`, so the comment
/// "update the UI with info?.displayPosition / info?.ewtMinutes" is that call (`updateUI`, the
/// app's), and the other cases `break`.
func listenForQueueInfo(sdk: ECVSdk, updateUI: @escaping @Sendable (Int?, Int?) -> Void) {
    sdk.modules.onCallEvent.append { (videoCall, newEvent, lastEvent) in
        switch newEvent.type {
        case .QueueInfoUpdated:
            let info = newEvent.objData as? QueueInfo
            updateUI(info?.displayPosition, info?.ewtMinutes)

        case .AgentConnected:
            // navigate to the call screen
            break

        case .Error, .Hangup, .CallEnded:
            // leave the queue screen
            break

        default:
            break
        }
    }
}

/// The demo's QueueScreen state ("Render it"): the last snapshot and when the position layout
/// shows. `hasQueueData` is private in the guide; here the test reads it.
struct QueueInfoScreen: Sendable {
    @State private var queueInfo: QueueInfo? = nil

    // Only switch layouts once the backend actually reported something to show.
    var hasQueueData: Bool {
        queueInfo?.displayPosition != nil || queueInfo?.ewtMinutes != nil
    }

    /// "The last snapshot is also available at any time as videoCall.queueInfo".
    func screenAppeared(call: VideoCall?) {
        queueInfo = call?.queueInfo
    }

    /// What a `QueueInfoUpdated` event brings.
    func queueInfoUpdated(_ info: QueueInfo?) {
        queueInfo = info
    }
}

/// "Implement the overlay": the call screen's flag, driven from the events. `isOnHold` is
/// private in the guide; here the test reads it.
struct HoldAwareCallScreen: Sendable {
    let appState: AppState
    @State var videoCall: VideoCall?
    @State var isOnHold = false

    func driveTheFlagFromTheEvents() {
        appState.sdk?.modules.onCallEvent.append { (videoCall, newEvent, lastEvent) in
            if self.videoCall?.rtcId != videoCall.rtcId {
                return // only react to the current call's events
            }

            switch newEvent.type {
            case .StartHold:
                isOnHold = true
            case .EndHold:
                isOnHold = false
            // … other events …
            default:
                break
            }
        }
    }
}

@Suite struct DanamonGuideExamples {
    /// "Enable the feature", with the defaults the guide states.
    @Test func enableQueueInfo() {
        let config = ECVSdkConfiguration(
            name: "My Environment",
            serviceUrl: "https://your-ecv-service",
            useQueueSocket: false,          // the queue socket takes precedence, so turn it off
            useQueueInfo: true,             // queue position + estimated wait time
            queueInfoIntervalDelay: 3000    // poll interval in ms, optional (default 3000)
        )
        #expect(!config.useQueueSocket && config.useQueueInfo && config.queueInfoIntervalDelay == 3000)
        #expect(config.queueInfoEndpoint == "/api/WaitForRoomQueueInterval", "default /api/WaitForRoomQueueInterval")
        #expect(ECVSdkConfiguration(name: "My Environment", serviceUrl: "https://your-ecv-service").useQueueInfo == false,
                "off by default")
    }

    /// "Listen for the event": the UI gets the figures for display; -1 (no queue data) gives nil.
    @Test func theQueueInfoListenerGetsDisplayFigures() async throws {
        let sdk = try offlineSDK()
        let call = try #require(await sdk.createVideoCall(rtcId: "queued"))
        let shown = Mutex<[String]>([])
        listenForQueueInfo(sdk: sdk) { position, minutes in
            shown.withLock { $0.append("\(position.map(String.init) ?? "-") \(minutes.map(String.init) ?? "-")") }
        }
        let listener = try #require(Array(sdk.modules.onCallEvent).last)
        for info in [QueueInfo(state: "wait", position: 3, ewtSeconds: 61), QueueInfo(state: "wait", position: -1, ewtSeconds: -1)] {
            listener(call, VideoCallEvent(type: .QueueInfoUpdated, detail: info.state, objData: info), .none)
        }
        listener(call, VideoCallEvent(type: .AgentConnected), .none)
        #expect(shown.withLock { $0 } == ["3 2", "- -"], "61 s is about 2 minutes; -1 is shown as nothing")
    }

    /// "Render it": the position layout only once there is a real figure.
    @Test func thePositionLayoutNeedsARealFigure() async throws {
        let screen = QueueInfoScreen()
        let sdk = try offlineSDK()
        screen.screenAppeared(call: await sdk.createVideoCall(rtcId: "not-polled-yet"))
        #expect(!screen.hasQueueData, "no snapshot before the first poll")
        screen.queueInfoUpdated(QueueInfo(state: "wait", position: -1, ewtSeconds: -1))
        #expect(!screen.hasQueueData, "-1 is no queue data")
        screen.queueInfoUpdated(QueueInfo(state: "wait", position: nil, ewtSeconds: 30))
        #expect(screen.hasQueueData, "an EWT without a position")
        screen.queueInfoUpdated(QueueInfo(state: "wait", position: 4, ewtSeconds: nil))
        #expect(screen.hasQueueData, "a position without an EWT")
    }

    /// "Attached data on the create call page (Danamon)": the guide's two declarations, and what
    /// each sends when the caller changes nothing.
    @Test func theGuidesCallAttributes() throws {
        let videoFlow = EnvironmentCallAttribute(key: "video_flow", displayName: "Video Flow", values: ["ETB", "NTB"])

        let nikNumber = EnvironmentCallAttribute(key: "NikNumber", displayName: "Nik Number (encrypted)",
                                                 defaultValue: "…", type: "text")

        #expect(videoFlow.type == .select && videoFlow.defaultValue == nil, "select is the default type")
        #expect(nikNumber.type == .text && nikNumber.values.isEmpty)
        #expect(try [videoFlow, nikNumber].dialAttributes(choosing: [:]) == ["video_flow": "ETB", "NikNumber": "…"],
                "the first value is preselected; the text field is prefilled")
        #expect(try [videoFlow, nikNumber].dialAttributes(choosing: ["video_flow": "NTB"])["video_flow"] == "NTB")
    }

    /// "Automatic media side effects".
    @Test func holdSideEffectsAreOnByDefault() {
        let config = ECVSdkConfiguration(
            name: "My Environment",
            serviceUrl: "https://your-ecv-service",
            autoHandleHoldSideEffects: true   // default
        )
        #expect(config.autoHandleHoldSideEffects)
        #expect(ECVSdkConfiguration(name: "My Environment", serviceUrl: "https://your-ecv-service").autoHandleHoldSideEffects)
    }

    /// "Drive it from the events": StartHold and EndHold of the current call flip the flag,
    /// another call's do not.
    @Test func theHoldFlagFollowsTheCurrentCall() async throws {
        let sdk = try offlineSDK()
        let screen = HoldAwareCallScreen(appState: AppState(sdk: sdk))
        let call = try #require(await sdk.createVideoCall(rtcId: "held"))
        let other = try #require(await sdk.createVideoCall(rtcId: "someone-else"))
        screen.videoCall = call
        screen.driveTheFlagFromTheEvents()
        let handler = try #require(Array(sdk.modules.onCallEvent).last)
        handler(call, VideoCallEvent(type: .StartHold), .none)
        #expect(screen.isOnHold)
        handler(other, VideoCallEvent(type: .EndHold), .none)
        #expect(screen.isOnHold, "another call's resume")
        handler(call, VideoCallEvent(type: .EndHold), .none)
        #expect(!screen.isOnHold)
    }
}
