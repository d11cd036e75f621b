import ECV
import ECVAgent
import Foundation
import Testing

// README.md, "Using the SDK": the caller example, built from the ECV product alone. `myRenderer`
// is the app's renderer, here a parameter.

func readmeCallerExample(myRenderer: some VideoRenderer) async throws {
    // Throws ECVConfigurationError for a pin or CA file it cannot honour.
    let sdk = try ECVSdk(config: ECVSdkConfiguration(name: "Prod", serviceUrl: "https://ecv.example.com",
                                                      useQueueSocket: true, pinnedCertificates: ["sha256/<base64 of the key's SHA-256>"]))
    Logger.setLevel(logLevel: .info)

    sdk.modules.onCallEvent.append { videoCall, newEvent, lastEvent in
        if newEvent.type == .Error { Logger.error(videoCall.lastError) }
    }

    guard let call = await sdk.createVideoCall() else { return }          // GotRtcId
    await call.start(dialCallParameters: DialCallParameters(callerName: "Jane Doe", queue: "TechSupport"))
    if await call.agentConnected?.value == true,                          // AgentConnected
       let connection = call.connect(parameters: ConnectParameters(videoWidth: 1280, videoHeight: 720, videoCodec: "H264")) {
        connection.remoteVideoRenderer = myRenderer                        // any VideoRenderer: RGBA frames
        connection.videoSource = .cameras(front: .camera(device: "/dev/video0"), back: .preset(name: "ball"))
        await connection.startRoom()                                       // … WebRtcConnected
        try await connection.startRecording(to: URL(fileURLWithPath: "call.mkv"))
        connection.setAudioEnabled(state: false)                           // AudioMuted, agent told STATUS|AUDIO|MUTED
    }
    call.hangup()                                                          // Hangup … CallEnded(LOCAL_HANGUP)
}

// README.md, "Using the SDK": the agent-bot example, built from the ECV and ECVAgent products alone.
func readmeAgentExample() async throws {
    var configuration = AgentBotConfiguration(serviceUrl: "https://ecv.example.com", name: "Recorder", queues: ["TechSupport"],
                                              parameters: ConnectParameters(videoWidth: 640, videoHeight: 480))
    configuration.pinnedCertificates = ["sha256/<base64 of the key's SHA-256>"]
    let bot = try AgentBot(configuration: configuration)   // throws for a pin it cannot honour
    try await bot.connect()
    try await bot.ready()
    for await case .callStarted(let call) in bot.events() {  // auto-accepted (configuration.acceptPolicy)
        Task {
            for await event in call.events() {
                if case .connected = event, !call.isRecording {
                    try await call.startRecording(to: URL(fileURLWithPath: "\(call.rtcId).mkv"), layout: .pictureInPicture)
                }
                if case .textChannelOpen = event {
                    try call.hold()
                    try call.pickup()
                    print("flash:", try await call.requestFlash(true))  // .accepted, .refused or .unavailable
                }
            }
        }
    }
}

@Suite struct ReadmeExamples {
    /// Like the caller example, the agent example stops at its placeholder pin.
    @Test func theAgentExampleRefusesItsPlaceholderPin() async {
        await #expect(throws: ECVConfigurationError.self) { try await readmeAgentExample() }
    }

    /// The example's own first comment: its placeholder pin is not a pin, so it stops right
    /// there, before a byte is sent.
    @Test func theCallerExampleRefusesItsPlaceholderPin() async {
        await #expect(throws: ECVConfigurationError.self) {
            try await readmeCallerExample(myRenderer: Renderer())
        }
    }
}
