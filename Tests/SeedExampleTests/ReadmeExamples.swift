import ECV
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

@Suite struct ReadmeExamples {
    /// The example's own first comment: its placeholder pin is not a pin, so it stops right
    /// there, before a byte is sent.
    @Test func theCallerExampleRefusesItsPlaceholderPin() async {
        await #expect(throws: ECVConfigurationError.self) {
            try await readmeCallerExample(myRenderer: Renderer())
        }
    }
}
