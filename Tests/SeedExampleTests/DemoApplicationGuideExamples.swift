import ECV
import Testing

// iOS SDK guide, "Demo Application Guide" → "Screen-by-Screen SDK Integration".

/// "MainScreen", key features. Adapted: the guide's `ECVModules` is the constant its CallScreen
/// `setup()` declares (`let ECVModules = appState.sdk?.modules`); the call is returned so the
/// fragment has a use for it.
func mainScreenStartsACall(appState: AppState) async -> VideoCall? {
    let ECVModules = appState.sdk?.modules

    // SDK initialization
    let call = await appState.sdk?.createVideoCall()

    // Event handling
    ECVModules?.onCallEvent.append { (videoCall, newEvent, lastEvent) in
        // Handle call events
    }
    return call
}

/// "QueueScreen", key features (the guide prints them run together on one line).
struct QueueScreen: Sendable {
    let appState: AppState
    let name: String
    let queue: String?
    let queueKey: String
    let queueValue: String

    func joinTheQueue(call: VideoCall?) async {
        // Queue joining
        let dialCallParameters = DialCallParameters( callerName: name, queue: queue, attributes: [queueKey: queueValue] )

        // Event listening
        let ECVModules = appState.sdk?.modules
        ECVModules?.onCallEvent.append { (videoCall: VideoCall, newEvent: VideoCallEvent, lastEvent: VideoCallEvent) in
            if(videoCall.rtcId != call?.rtcId){
                return // Making sure we only catch the events related to the current call. // comment this code to catch all calls' events
            }

            // Agent connection handling
            if(newEvent.type == .AgentConnected) {
                // AGENT IS CONNECTED
                // GO TO CALL SCREEN
            }
            else if(newEvent.type == .Error){
                // showError = true
            }
        }

        // Start the call
        await call?.start(dialCallParameters: dialCallParameters)
    }
}

/// "CallScreen", key features: the connection and its two streams, in the screen's `@State`
/// (the guide calls them renderers; they are `MediaStream`s, whose `videoRenderer` is the
/// renderer). Not here: the guide's bodiless `func toggleLocalAudio()`, `toggleLocalVideo()`,
/// `toggleFlashlight()`, `switchCamera()`, `switchViewRenderers()` (names without code; their
/// SDK calls are the Usage Guide's "Call Controls").
struct CallScreenStreams: Sendable {
    @State var localRenderer: MediaStream?
    @State var remoteRenderer: MediaStream?

    func setUp(videoCall: VideoCall?) {
        // WebRTC setup
        let webRtcConnection = videoCall?.connect()

        // Stream management
        localRenderer = webRtcConnection?.localStream
        remoteRenderer = webRtcConnection?.remoteStream
    }
}

/// "Event Handling System". Adapted: Swift wants a statement in every `case` and an exhaustive
/// switch, so each case has a `break` and a `default` closes it.
func eventHandlingSystem(ECVModules: ECVModules?) {
    ECVModules?.onCallEvent.append { (videoCall, newEvent, lastEvent) in
        switch newEvent.type {
        case .AgentConnected:
            // Handle agent connection
            break
        case .CallEnded:
            // Handle call end
            break
        case .Error:
            // Handle errors
            break
        default:
            break
        }
    }
}

@Suite struct DemoApplicationGuideExamples {
    /// "QueueScreen": the guide's argument order, `queue` before `attributes`.
    @Test func queueScreenParametersInTheGuidesOrder() {
        let (name, queue, queueKey, queueValue) = ("Jane", "Billing", "video_flow", "ETB")
        let dialCallParameters = DialCallParameters( callerName: name, queue: queue, attributes: [queueKey: queueValue] )
        #expect(dialCallParameters == DialCallParameters(callerName: "Jane", attributes: ["video_flow": "ETB"], queue: "Billing"))
    }

    /// "CallScreen": the streams of a connection that is not started yet (no network, no media).
    /// The call is marked dialed as a transferred leg is, since `connect()` needs a dialed call.
    @Test func callScreenStreams() async throws {
        let sdk = try offlineSDK()
        let call = try #require(await sdk.createVideoCall(rtcId: "streams"))
        call.isDialed = true
        let screen = CallScreenStreams()
        screen.setUp(videoCall: call)
        #expect(screen.localRenderer?.party == .local && screen.remoteRenderer?.party == .remote)
        let renderer = Renderer()
        screen.remoteRenderer?.videoRenderer = renderer
        #expect(call.webRtcConnection?.remoteVideoRenderer === renderer, "the stream's renderer is the connection's")
        #expect(screen.remoteRenderer?.tracks.isEmpty == true, "no media before startRoom()")
    }
}
