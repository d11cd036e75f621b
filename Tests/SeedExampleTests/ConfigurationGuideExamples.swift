import ECV
import Testing

// iOS SDK guide, "Configuration Guide".

/// "Call Configuration", the example's last line.
func startTheConfiguredCall(call: VideoCall, dialCallParameters: DialCallParameters) async {
    await call.start(dialCallParameters: dialCallParameters)
}

/// "WebRTC Connection Parameters", the example's first statement.
func makeCustomConnectParams() -> ConnectParameters {
    let customConnectParams = ConnectParameters(
        videoWidth: 1280,
        videoHeight: 720,
        videoCodec: "H264",
        additionalHeaders: ["X-WebRTC-Auth": "webrtc_token"]
    )
    return customConnectParams
}

/// "WebRTC Connection Parameters", the example's rest. Adapted: `connect(parameters:)` gives an
/// optional connection and `startRoom()` is `async`, as the guide's own CallScreen `setup()`
/// has them (`guard let … = self.videoCall?.connect()`, `await webRtcConnection.startRoom()`).
func connectWithCustomParameters(videoCall: VideoCall, customConnectParams: ConnectParameters) async {
    // Get the WebRtcConnection using the custom parameters
    let webRtcConnection = videoCall.connect(parameters: customConnectParams)
    await webRtcConnection?.startRoom()
}

@Suite struct ConfigurationGuideExamples {
    /// "Basic Configuration". Adapted: the comma after `name:` (a typo in the guide).
    @Test func basicConfiguration() {
        let config = ECVSdkConfiguration(
            name: "Environment_Name",
            serviceUrl: "YOUR_SERVICE_URL",
        )
        #expect(config.name == "Environment_Name" && config.serviceUrl == "YOUR_SERVICE_URL")
    }

    /// "Optional Parameters": the defaults the guide states.
    @Test func theOptionalParametersDefaultAsTheGuideSays() {
        let config = ECVSdkConfiguration(name: "Environment_Name", serviceUrl: "https://ecv.example.com")
        #expect(config.webrtcUrl == "https://ecv.example.com", "webrtcUrl: same as serviceUrl")
        #expect(config.signalingUrl == "https://ecv.example.com", "signalingUrl: same as serviceUrl")
        #expect(config.useQueueSocket, "useQueueSocket: true")
        #expect(config.waitForRoomIntervalDelay == 3000)
        #expect(config.waitForRoomIntervalEndpoint == "https://ecv.example.com/api/WaitForRoomInterval?rtcId=",
                "serviceUrl + API.waitForRoomInterval + \"?rtcId=\"")
    }

    /// "Example Usages". Adapted: the commas after `name:` in the first two.
    @Test func exampleUsages() {
        let configV175 = ECVSdkConfiguration(
            name: "Some ECV 1.75 App",
            serviceUrl: "https://prod-v175.ecv.example.com"
        )

        let configV15 = ECVSdkConfiguration(
            name: "Some ECV 1.5 App",
            serviceUrl: "https://prod-v15.ecv.example.com",
            useQueueSocket: false
        )

        // The seed's argument order: webrtcUrl and signalingUrl before useQueueSocket.
        let configSeparateV15 = ECVSdkConfiguration(
            name: "Some custom ECV 1.5 App",
            serviceUrl: "https://api.example.com",
            webrtcUrl: "https://webrtc-v15.example.com", // Separate endpoint for /join
            signalingUrl: "https://websocket-v15.example.com", // Separate WebSocket server (if applicable for v1.5 signaling)
            useQueueSocket: false, // Required for v1.5
            waitForRoomIntervalDelay: 3000, // Poll every 5 seconds
            waitForRoomIntervalEndpoint: "/custom/pollstatus?callid=" // Custom polling endpoint
        )

        #expect(configV175.useQueueSocket && configV175.webrtcUrl == "https://prod-v175.ecv.example.com")
        #expect(!configV15.useQueueSocket && configV15.signalingUrl == "https://prod-v15.ecv.example.com")
        #expect(configSeparateV15.serviceUrl == "https://api.example.com")
        #expect(configSeparateV15.webrtcUrl == "https://webrtc-v15.example.com")
        #expect(configSeparateV15.signalingUrl == "https://websocket-v15.example.com")
        #expect(!configSeparateV15.useQueueSocket)
        #expect(configSeparateV15.waitForRoomIntervalDelay == 3000)
        #expect(configSeparateV15.waitForRoomIntervalEndpoint == "/custom/pollstatus?callid=")
        #expect(!configSeparateV15.useQueueInfo && configSeparateV15.queueInfoIntervalDelay == 3000
                && configSeparateV15.autoHandleHoldSideEffects, "what it leaves out keeps its default")
    }

    /// "Basic Call Configuration": no required parameters; a caller without a name gets one.
    @Test func basicCallConfiguration() {
        let dialCallParameters = DialCallParameters() // No required parameters
        #expect(dialCallParameters.callerName.wholeMatch(of: /Caller-\d{4}/) != nil, "generated: \(dialCallParameters.callerName)")
        #expect(dialCallParameters.attributes.isEmpty && dialCallParameters.queue == nil, "the system's default queue")
        #expect(dialCallParameters.acdAttributes.isEmpty && dialCallParameters.customPayload.isEmpty
                && dialCallParameters.additionalHeaders.isEmpty)
    }

    /// "Example Usages" of `DialCallParameters`. Adapted: the attributes are written with
    /// Kotlin's `to` in the guide (`"accountNumber" to "ACC9876"`); Swift's dictionary literal
    /// has `:`.
    @Test func dialCallParametersExample() {
        let dialCallParameters = DialCallParameters(
            callerName: "Jane Doe",
            attributes: [
                "accountNumber": "ACC9876",
                "lastInteraction": "2023-10-26"
            ],
            queue: "SupportQueue",
            additionalHeaders: ["X-Auth-Token": "user_session_token"]
        )
        #expect(dialCallParameters.callerName == "Jane Doe" && dialCallParameters.queue == "SupportQueue")
        #expect(dialCallParameters.attributes == ["accountNumber": "ACC9876", "lastInteraction": "2023-10-26"])
        #expect(dialCallParameters.additionalHeaders == ["X-Auth-Token": "user_session_token"])
    }

    /// "WebRTC Connection Parameters": every default the guide lists.
    @Test func connectionParametersDefaultAsTheGuideSays() {
        let parameters = ConnectParameters()
        #expect(parameters.connectionTimeout == 10000)
        #expect(parameters.joinHttpConnectTimeout == 3000 && parameters.joinHttpReadTimeout == 3000)
        #expect(parameters.additionalHeaders.isEmpty)
        #expect(parameters.videoCallEnabled && parameters.useSpeakerPhone)
        #expect(parameters.autoHandleCameraSwitch && parameters.autoHandleHoldSideEffects == nil,
                "hold side effects: the configuration's unless the call says (README, Differences)")
        #expect(parameters.videoWidth == 480 && parameters.videoHeight == 640)
        #expect(parameters.videoFps == 0 && parameters.videoMaxBitrate == 0)
        #expect(parameters.videoCodec == "VP8" && parameters.videoCodecHwAcceleration)
        #expect(parameters.audioCodec == "OPUS" && parameters.audioStartBitrate == 0)
        #expect(!parameters.noAudioProcessing && !parameters.disableBuiltInAEC && !parameters.disableBuiltInNS)
        #expect(!parameters.tracing)
        #expect(parameters.textChannelConfig?.enabled == true, "a text channel by default")
    }

    /// "WebRTC Connection Parameters", the example's parameters.
    @Test func customConnectionParameters() {
        let customConnectParams = makeCustomConnectParams()
        #expect(customConnectParams.videoWidth == 1280 && customConnectParams.videoHeight == 720)
        #expect(customConnectParams.videoCodec == "H264" && customConnectParams.additionalHeaders == ["X-WebRTC-Auth": "webrtc_token"])
        #expect(customConnectParams.connectionTimeout == 10000, "the rest keep their defaults")
    }

    /// "DataChannelConfig": the initializer's defaults.
    @Test func dataChannelConfigDefaults() {
        let config = DataChannelConfig(enabled: true, label: "textchannel")
        #expect(config.enabled && config.label == "textchannel")
        #expect(config.id == -1 && !config.negotiated && config.protocol == "" && config.ordered)
        #expect(config.maxRetransmits == -1 && config.maxRetransmitTimeMs == -1)
    }
}
