import ECV
import Foundation
import Synchronization
import Testing

// iOS SDK guide, "Usage Guide". Not here: "Setting Up Video Views" (a SwiftUI view with
// UIViewRepresentable and RTCMTLVideoView; its Renderer class is `Renderer` in
// DemoAppStandIns.swift) and "Permission Handling" (AVCaptureDevice.requestAccess).
//
// Snippets that use `call`, `sdk` or a connection the guide created earlier take them as
// parameters; where they call `UIApplication.shared.open`, an `open` closure stands in.

/// "Creating a Call": with the backend's rtcId.
func createCallFromTheBackend(sdk: ECVSdk) async -> VideoCall? {
    // Create and start the video call
    let call = await sdk.createVideoCall()
    return call
}

/// "VideoCall Events".
func addTheCallEventListener(sdk: ECVSdk, call: VideoCall) {
    sdk.modules.onCallEvent.append { (videoCall: VideoCall, newEvent: VideoCallEvent, lastEvent: VideoCallEvent) in
        if(videoCall.rtcId != call.rtcId){
            return // Making sure we only catch the events related to the current call. // comment this code to catch all calls' events
        }

        if(newEvent.type == .AgentConnected) {
            Logger.info("From sdk.modules.onCallEvent: \(newEvent.type)")
        }
        else if(newEvent.type == .Error){
            Logger.error("From sdk.modules.onCallEvent: \(newEvent.detail ?? "")")
        }
        else {
            Logger.info("From sdk.modules.onCallEvent: \(newEvent)")
        }
    }
}

/// "Starting the VideoCall".
func startTheCall(call: VideoCall, dialCallParameters: DialCallParameters) async {
    await call.start(dialCallParameters: dialCallParameters)
}

/// "Wait for an Agent to connect (inQueue)", way 2.
func waitForTheAgent(call: VideoCall, open: (URL) -> Void) async {
    let isAgentConnected = await call.agentConnected?.value
    Logger.info("isAgentConnected: \(String(describing: isAgentConnected))")

    if(isAgentConnected == true) {
        // Openning the call in a saperate web browser maybe? // useful for Development
        if let urlString = call.getUrl(), let url = URL(string: urlString) {
            open(url)
        }
        else {
            Logger.error("Failed to open URL: invalid URL string")
        }
    }
    else {
        Logger.warn("Agent not connected!")
    }
}

/// "Connect the VideoCall", way 2: the caller's side in a browser.
func joinInABrowser(call: VideoCall, open: (URL) -> Void) {
    if let urlString = call.getUrl(), let url = URL(string: urlString) {
        open(url)
    }
    else {
        Logger.error("Failed to open URL: invalid URL string")
    }
}

/// "Connect the VideoCall", way 1: the demo's `CallScreen` with its `setup()` exactly as the guide
/// prints it, the SwiftUI `body` left out. `@State` and the navigation path are the stand-ins of
/// DemoAppStandIns.swift.
struct CallScreen: Sendable {
    let rtcId: String?
    let appState: AppState
    let path: NavigationPath

    @State private var videoCall: VideoCall?
    @State private var webRtcConnection: WebRtcConnection?

    @State private var localRenderer: Renderer?
    @State private var remoteRenderer: Renderer?
    @State private var callError: String?

    init(rtcId: String?, appState: AppState, path: NavigationPath) {
        self.rtcId = rtcId
        self.appState = appState
        self.path = path
    }

    func setup() {
      Task {
          guard let rtcId = self.rtcId else {
              self.callError = "RtcId not initialized"
              Logger.error("Setup failed: RtcId is nil")
              return
          }

          if let videoCall = appState.sdk?.getVideoCall(rtcId: rtcId){
              self.videoCall = videoCall
          }
          else {
              self.videoCall = await appState.sdk?.createVideoCall(rtcId: rtcId)
          }

          // Handle call events
          let ECVModules = appState.sdk?.modules
          ECVModules?.onCallEvent.append { (videoCall: VideoCall, newEvent: VideoCallEvent, lastEvent: VideoCallEvent) in
              if(self.videoCall?.rtcId != videoCall.rtcId){
                  return // Making sure we only catch the events related to the current call. // comment this line to catch all calls' events
              }

              if(newEvent.type == .CallEnded){
                  ECVModules?.onCallEvent = [] // reset events to prevent overflow of events
                  path.append(NavigationRoute.mainScreen)
              }
          }

          guard let webRtcConnection = self.videoCall?.connect() else {
              self.callError = "WebRtcConnection failed to connect"
              Logger.error("Setup failed: WebRtcConnection is nil")
              return
          }
          self.webRtcConnection = webRtcConnection

          Logger.debug("Instantiating and assigning renderers...")
          let local = Renderer()
          let remote = Renderer()

          webRtcConnection.localVideoRenderer = local
          webRtcConnection.remoteVideoRenderer = remote

          self.localRenderer = local
          self.remoteRenderer = remote

          Logger.info("Starting WebRTC room...")
          await webRtcConnection.startRoom()
          Logger.info("Call setup complete.")
      }
    }

    /// The screen's `hangup(by:)`, from "Setting Up Video Views".
    func hangup(by: String = "HangUpButton") {
        Logger.debug("Hangup requested by: \(by)")

        videoCall?.hangup()

        videoCall = nil
        webRtcConnection = nil
        localRenderer = nil
        remoteRenderer = nil
    }
}

/// "Call Controls".
func callControls(webRtcConnection: WebRtcConnection, videoCall: VideoCall) async throws {
    // Mute/Unmute Audio
    webRtcConnection.setAudioEnabled(state: false) // Mute
    webRtcConnection.setAudioEnabled(state: true)  // Unmute

    // Enable/Disable Video
    webRtcConnection.setVideoEnabled(state: false) // Disable video
    webRtcConnection.setVideoEnabled(state: true)  // Enable video

    // Switch Camera
    try await webRtcConnection.switchCamera()

    // Enable/Disable Flashlight
    webRtcConnection.setFlashlightEnabled(state: true)
    webRtcConnection.setFlashlightEnabled(state: false)

    // End Call
    videoCall.hangup()
}

/// "Video Call Event Handling".
func handleCallEvents(sdk: ECVSdk, call: VideoCall) {
    sdk.modules.onCallEvent.append { (videoCall: VideoCall, newEvent: VideoCallEvent, lastEvent: VideoCallEvent) in
        if(videoCall.rtcId != call.rtcId){
            return // Making sure we only catch the events related to the current call. // comment this code to catch all calls' events
        }

        if(newEvent.type == .DialSuccess){
            Logger.debug("From sdk.modules.onCallEvent: \(newEvent.detail ?? "")")
        }
        else if(newEvent.type == .CallEnded){
            // handle it
        }
        //else if(){

        //}
    }
}

/// "Error Handling", the first handler.
func logCallErrors(sdk: ECVSdk, call: VideoCall) {
    sdk.modules.onCallEvent.append { (videoCall: VideoCall, newEvent: VideoCallEvent, lastEvent: VideoCallEvent) in
        if(videoCall.rtcId != call.rtcId){
            return // Making sure we only catch the events related to the current call. // comment this code to catch all calls' events
        }

        if(newEvent.type == .Error){
            Logger.error("From sdk.modules.onCallEvent: \(newEvent.detail ?? "")")

            Logger.error(videoCall.lastError)
        }
    }
}

/// "Error Handling", checking for a specific error. Adapted: the guide's `case` labels lack
/// their colons and its switch is not exhaustive (`// etc..`), which Swift requires: colons and a
/// `default` added.
func checkForASpecificError(sdk: ECVSdk, call: VideoCall) {
    sdk.modules.onCallEvent.append { (videoCall: VideoCall, newEvent: VideoCallEvent, lastEvent: VideoCallEvent) in
        if(videoCall.rtcId != call.rtcId){
            return // Making sure we only catch the events related to the current call. // comment this code to catch all calls' events
        }

        if(newEvent.type == .Error){
            Logger.error("From sdk.modules.onCallEvent: \(newEvent.detail ?? "")")
            Logger.error(videoCall.lastError)

            switch videoCall.lastError.name {
                case .SERVICE_URL_REQUIRED:
                    break
                case .CALL_NOT_DIALED:
                    break
                case .NO_ICE_SERVERS_FOUND:
                    break
                // etc..
                default:
                    break
            }
        }
    }
}

/// Every snippet here that needs no network, run. `Logger` is process-wide, hence serialized.
@Suite(.serialized) struct UsageGuideExamples {
    /// "Basic Initialization". Adapted as in Getting Started: the comma after `name:`, `try`.
    @Test func basicInitialization() throws {
        // Create SDK configuration
        let config = ECVSdkConfiguration(
            name: "Environment_Name", // Give it any name that refers to your app or backend
            serviceUrl: "YOUR_SERVICE_URL",
            useQueueSocket: true // or false based on your backend version (false: 1.5 or true or false: 1.75)
        )

        // Initialize SDK instance
        let sdk = try ECVSdk(config: config)
        #expect(sdk.config.serviceUrl == "YOUR_SERVICE_URL" && sdk.config.useQueueSocket)
    }

    /// "Configuration Options". Adapted: the guide writes the types (`Int`, `String`) where the
    /// two polling arguments go; here they carry values.
    @Test func configurationOptions() {
        let config = ECVSdkConfiguration(
            name: "Environment_Name",
            serviceUrl: "YOUR_SERVICE_URL",
            useQueueSocket: true,
            webrtcUrl: "YOUR_WEBRTC_URL", // Optional, default: serviceUrl
            signalingUrl: "YOUR_SIGNALING_URL", // Optional, default: serviceUrl
            waitForRoomIntervalDelay: 3000, // Optional ( For 1.5 only ), default: 3000
            waitForRoomIntervalEndpoint: "/api/WaitForRoomInterval?rtcId=" // Optional ( For 1.5 only ), default: "serviceUrl + API.waitForRoomInterval + "?rtcId=""
        )
        #expect(config.webrtcUrl == "YOUR_WEBRTC_URL" && config.signalingUrl == "YOUR_SIGNALING_URL")
        #expect(config.waitForRoomIntervalDelay == 3000 && config.waitForRoomIntervalEndpoint == "/api/WaitForRoomInterval?rtcId=")
    }

    /// "Extra Configs": the level is `.info` unless set.
    @Test func extraConfigs() {
        let recorder = LogRecorder(level: .info)
        defer { recorder.stop() }
        Logger.debug("hidden")
        Logger.setLevel(logLevel: .debug) // .debug To enable debugging everything in SDK (.debug, .info, .warn, .error) // default: .info
        Logger.debug("shown")
        #expect(Logger.level == .debug)
        #expect(recorder.messages.contains("shown") && !recorder.messages.contains("hidden"), "\(recorder.messages)")
    }

    /// "Creating a Call" with an rtcId you already have: no request is made.
    @Test func creatingACallWithAnRtcId() async throws {
        let sdk = try offlineSDK()
        let call = await sdk.createVideoCall(rtcId: "your_rtcId")
        #expect(call?.rtcId == "your_rtcId")
        #expect(sdk.getVideoCall(rtcId: "your_rtcId") === call)
    }

    /// "VideoCall Events": only the current call's events are logged.
    @Test func theEventListenerFollowsOnlyTheCurrentCall() async throws {
        let recorder = LogRecorder(level: .info)
        defer { recorder.stop() }
        let sdk = try offlineSDK()
        let call = try #require(await sdk.createVideoCall(rtcId: "current"))
        let other = try #require(await sdk.createVideoCall(rtcId: "other"))
        addTheCallEventListener(sdk: sdk, call: call)
        let listener = try #require(Array(sdk.modules.onCallEvent).last)
        listener(other, VideoCallEvent(type: .AgentConnected), .none)
        #expect(!recorder.messages.contains("From sdk.modules.onCallEvent: AgentConnected"), "another call's event")
        listener(call, VideoCallEvent(type: .AgentConnected), .none)
        listener(call, VideoCallEvent(type: .Error, detail: "queue socket closed"), .none)
        #expect(recorder.messages.contains("From sdk.modules.onCallEvent: AgentConnected"), "\(recorder.messages)")
        #expect(recorder.messages.contains("From sdk.modules.onCallEvent: queue socket closed"), "\(recorder.messages)")
    }

    /// "VideoCall Parameters". Adapted: the guide writes the types (`[String: String]`,
    /// `String?`) where the values go; here they are empty or nil.
    @Test func videoCallParameters() {
        let dialCallParameters = DialCallParameters(
            callerName: "Caller_Name",      // Optional but should be provided, otherwise a random name will be generated
            attributes: [:],   // Optional, Attach data for the call
            queue: nil,                 // Optional, Queue name, if not provided, will use system's default queue

            // Advanced Optional Params
            acdAttributes: [:],
            customPayload: [:],
            additionalHeaders: [:],
        )
        #expect(dialCallParameters == DialCallParameters(callerName: "Caller_Name"))
    }

    /// "VideoCall Parameters", the example.
    @Test func videoCallParametersExample() {
        let dialCallParameters = DialCallParameters(
            callerName: "John Doe",
            attributes: [
                "department": "support",
                "priority": "high"
            ],
            queue: "TechSupport",
        )
        #expect(dialCallParameters.callerName == "John Doe" && dialCallParameters.queue == "TechSupport")
        #expect(dialCallParameters.attributes == ["department": "support", "priority": "high"])
    }

    /// "Wait for an Agent to connect" and "Connect the VideoCall" way 2: the browser page of the call.
    @Test func joiningInABrowserOpensTheCallsPage() async throws {
        let sdk = try offlineSDK()
        let call = try #require(await sdk.createVideoCall(rtcId: "browser"))
        let opened = Mutex<[URL]>([])
        joinInABrowser(call: call) { url in opened.withLock { $0.append(url) } }
        #expect(opened.withLock { $0 }.map(\.absoluteString) == ["https://ecv.example.com/r/browser"])
    }

    /// "Video Call Event Handling": DialSuccess is logged at debug level with its detail.
    @Test func eventHandlingLogsDialSuccess() async throws {
        let recorder = LogRecorder(level: .debug)
        defer { recorder.stop() }
        let sdk = try offlineSDK()
        let call = try #require(await sdk.createVideoCall(rtcId: "dialed"))
        handleCallEvents(sdk: sdk, call: call)
        let handler = try #require(Array(sdk.modules.onCallEvent).last)
        handler(call, VideoCallEvent(type: .DialSuccess, detail: "interaction-42"), .none)
        #expect(recorder.messages.contains("From sdk.modules.onCallEvent: interaction-42"), "\(recorder.messages)")
    }

    /// "Error Handling": the event's detail, then `videoCall.lastError` as name and message.
    @Test func errorHandlingLogsTheLastError() async throws {
        let recorder = LogRecorder(level: .info)
        defer { recorder.stop() }
        let sdk = try offlineSDK()
        let call = try #require(await sdk.createVideoCall(rtcId: "failing"))
        logCallErrors(sdk: sdk, call: call)
        checkForASpecificError(sdk: sdk, call: call)
        for handler in sdk.modules.onCallEvent { handler(call, VideoCallEvent(type: .Error, detail: "dial refused"), .none) }
        #expect(recorder.messages.filter { $0 == "From sdk.modules.onCallEvent: dial refused" }.count == 2)
        #expect(recorder.messages.contains("NO_ERROR: No error."), "\(recorder.messages)")
    }

    /// "Video Call Event Handling": the guide's list of `VideoCallEventType` cases, each one there
    /// and named as listed (apps log and match these names).
    @Test func everyListedEventTypeExists() {
        let listed: [VideoCallEventType] = [
            .None, .Init, .GotRtcId, .DialSuccess, .Error, .OnQueue, .AgentConnected, .CallEnded, .SignalingConnected,
            .GotLocalStream, .GotRemoteStream,
            .JoinedRoom, .SignalingRegistered, .RtcPeerConnectionCreated,
            .GotOffer, .SentOffer, .GotAnswer, .SentAnswer,
            .AudioMuted, .AudioUnmuted, .VideoMuted, .VideoUnmuted,
            .RemoteAudioMuted, .RemoteAudioUnmuted, .RemoteVideoMuted, .RemoteVideoUnmuted,
            .StartHold, .EndHold,
            .TakePhotoOn, .TakePhotoOff,
            .WebRtcOnDataChannel, .TextChannelConnected, .TextChannelMessage, .ConnectionTimeoutStart, .ConnectionTimeoutEnd,
            .WebRtcConnected, .WebRtcRenegotiationNeeded,
            .WebRtcDisconnected, .WebRtcFailed, .Hangup,
            .TransferPending, .TransferCancelled, .TransferCompleted,
        ]
        #expect(listed.map(\.rawValue) == [
            "None", "Init", "GotRtcId", "DialSuccess", "Error", "OnQueue", "AgentConnected", "CallEnded", "SignalingConnected",
            "GotLocalStream", "GotRemoteStream", "JoinedRoom", "SignalingRegistered", "RtcPeerConnectionCreated",
            "GotOffer", "SentOffer", "GotAnswer", "SentAnswer", "AudioMuted", "AudioUnmuted", "VideoMuted", "VideoUnmuted",
            "RemoteAudioMuted", "RemoteAudioUnmuted", "RemoteVideoMuted", "RemoteVideoUnmuted", "StartHold", "EndHold",
            "TakePhotoOn", "TakePhotoOff", "WebRtcOnDataChannel", "TextChannelConnected", "TextChannelMessage",
            "ConnectionTimeoutStart", "ConnectionTimeoutEnd", "WebRtcConnected", "WebRtcRenegotiationNeeded",
            "WebRtcDisconnected", "WebRtcFailed", "Hangup", "TransferPending", "TransferCancelled", "TransferCompleted",
        ])
    }

    /// "Error Handling": `ErrorObject`'s defaults and the listed `ErrorName` cases.
    @Test func errorObjectAndTheListedErrorNames() {
        let error = ErrorObject()
        #expect(error.name == ErrorName.NO_ERROR && error.message == "No error.")
        let listed: [ErrorName] = [
            .NO_ERROR, .SERVICE_URL_REQUIRED, .CALL_NOT_INITIALIZED, .CALL_ALREADY_DIALED, .QUEUE_SOCKET_CLOSED, .ERROR_DIALING,
            .CALL_NOT_DIALED, .ERROR_WAITING_FOR_ROOM, .NO_ICE_SERVERS_FOUND, .HANGUP_FAILED,
        ]
        #expect(listed.map(\.rawValue) == ["NO_ERROR", "SERVICE_URL_REQUIRED", "CALL_NOT_INITIALIZED", "CALL_ALREADY_DIALED",
                                           "QUEUE_SOCKET_CLOSED", "ERROR_DIALING", "CALL_NOT_DIALED", "ERROR_WAITING_FOR_ROOM",
                                           "NO_ICE_SERVERS_FOUND", "HANGUP_FAILED"])
    }

    /// "Best Practices" 4: weak references to the call and its connection, as the guide holds them.
    @Test func weakReferencesToTheCall() async throws {
        let sdk = try offlineSDK()
        weak var call: VideoCall?
        weak var webRtcConnection: WebRtcConnection?
        call = await sdk.createVideoCall(rtcId: "weakly-held")
        webRtcConnection = call?.webRtcConnection
        #expect(call?.rtcId == "weakly-held", "the SDK keeps a live call")
        #expect(webRtcConnection == nil, "no connection before connect()")
    }

    /// "Connect the VideoCall" way 1 without an rtcId: the guide's own first guard.
    @Test func callScreenSetupWithoutAnRtcIdGoesNowhere() async throws {
        let recorder = LogRecorder(level: .info)
        defer { recorder.stop() }
        let screen = CallScreen(rtcId: nil, appState: AppState(sdk: try offlineSDK()), path: NavigationPath())
        screen.setup()
        try await eventually("the setup gave up") { recorder.messages.contains("Setup failed: RtcId is nil") }
        #expect(screen.path.routes.isEmpty)
    }
}

/// Waits (bounded) for something a snippet's `Task` does; fails the test if it never happens.
func eventually(_ what: String, within limit: Duration = .seconds(10), _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + limit
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("not within \(limit): \(what)")
            return
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}
