internal import CGStreamer

// webrtcbin's enum-valued properties and signal arguments as Swift enums (see `GEnumeration`),
// and the properties the WebRTC layer sets on webrtcbin and the elements it makes, as typed keys.

extension WebRTCBin {
    /// `signaling-state` (GstWebRTCSignalingState).
    package enum SignalingState: GEnumeration, Sendable {
        case stable, closed, haveLocalOffer, haveRemoteOffer, haveLocalPranswer, haveRemotePranswer
        case unknown(Int)

        package static let known: [(value: Self, number: Int)] = [
            (.stable, Int(GST_WEBRTC_SIGNALING_STATE_STABLE.rawValue)),
            (.closed, Int(GST_WEBRTC_SIGNALING_STATE_CLOSED.rawValue)),
            (.haveLocalOffer, Int(GST_WEBRTC_SIGNALING_STATE_HAVE_LOCAL_OFFER.rawValue)),
            (.haveRemoteOffer, Int(GST_WEBRTC_SIGNALING_STATE_HAVE_REMOTE_OFFER.rawValue)),
            (.haveLocalPranswer, Int(GST_WEBRTC_SIGNALING_STATE_HAVE_LOCAL_PRANSWER.rawValue)),
            (.haveRemotePranswer, Int(GST_WEBRTC_SIGNALING_STATE_HAVE_REMOTE_PRANSWER.rawValue)),
        ]

        package var unknownNumber: Int? { if case .unknown(let number) = self { number } else { nil } }
    }

    /// `ice-connection-state` (GstWebRTCICEConnectionState).
    package enum ICEConnectionState: GEnumeration, Sendable {
        case new, checking, connected, completed, failed, disconnected, closed
        case unknown(Int)

        package static let known: [(value: Self, number: Int)] = [
            (.new, Int(GST_WEBRTC_ICE_CONNECTION_STATE_NEW.rawValue)),
            (.checking, Int(GST_WEBRTC_ICE_CONNECTION_STATE_CHECKING.rawValue)),
            (.connected, Int(GST_WEBRTC_ICE_CONNECTION_STATE_CONNECTED.rawValue)),
            (.completed, Int(GST_WEBRTC_ICE_CONNECTION_STATE_COMPLETED.rawValue)),
            (.failed, Int(GST_WEBRTC_ICE_CONNECTION_STATE_FAILED.rawValue)),
            (.disconnected, Int(GST_WEBRTC_ICE_CONNECTION_STATE_DISCONNECTED.rawValue)),
            (.closed, Int(GST_WEBRTC_ICE_CONNECTION_STATE_CLOSED.rawValue)),
        ]

        package var unknownNumber: Int? { if case .unknown(let number) = self { number } else { nil } }
    }

    /// `ice-gathering-state` (GstWebRTCICEGatheringState).
    package enum ICEGatheringState: GEnumeration, Sendable {
        case new, gathering, complete
        case unknown(Int)

        package static let known: [(value: Self, number: Int)] = [
            (.new, Int(GST_WEBRTC_ICE_GATHERING_STATE_NEW.rawValue)),
            (.gathering, Int(GST_WEBRTC_ICE_GATHERING_STATE_GATHERING.rawValue)),
            (.complete, Int(GST_WEBRTC_ICE_GATHERING_STATE_COMPLETE.rawValue)),
        ]

        package var unknownNumber: Int? { if case .unknown(let number) = self { number } else { nil } }
    }

    /// `connection-state` (GstWebRTCPeerConnectionState).
    package enum PeerConnectionState: GEnumeration, Sendable {
        case new, connecting, connected, disconnected, failed, closed
        case unknown(Int)

        package static let known: [(value: Self, number: Int)] = [
            (.new, Int(GST_WEBRTC_PEER_CONNECTION_STATE_NEW.rawValue)),
            (.connecting, Int(GST_WEBRTC_PEER_CONNECTION_STATE_CONNECTING.rawValue)),
            (.connected, Int(GST_WEBRTC_PEER_CONNECTION_STATE_CONNECTED.rawValue)),
            (.disconnected, Int(GST_WEBRTC_PEER_CONNECTION_STATE_DISCONNECTED.rawValue)),
            (.failed, Int(GST_WEBRTC_PEER_CONNECTION_STATE_FAILED.rawValue)),
            (.closed, Int(GST_WEBRTC_PEER_CONNECTION_STATE_CLOSED.rawValue)),
        ]

        package var unknownNumber: Int? { if case .unknown(let number) = self { number } else { nil } }
    }

    /// `bundle-policy` (GstWebRTCBundlePolicy).
    package enum BundlePolicy: GEnumeration, Sendable {
        case none, balanced, maxCompat, maxBundle
        case unknown(Int)

        package static let known: [(value: Self, number: Int)] = [
            (.none, Int(GST_WEBRTC_BUNDLE_POLICY_NONE.rawValue)),
            (.balanced, Int(GST_WEBRTC_BUNDLE_POLICY_BALANCED.rawValue)),
            (.maxCompat, Int(GST_WEBRTC_BUNDLE_POLICY_MAX_COMPAT.rawValue)),
            (.maxBundle, Int(GST_WEBRTC_BUNDLE_POLICY_MAX_BUNDLE.rawValue)),
        ]

        package var unknownNumber: Int? { if case .unknown(let number) = self { number } else { nil } }
    }

    /// `ice-transport-policy` (GstWebRTCICETransportPolicy).
    package enum ICETransportPolicy: GEnumeration, Sendable {
        case all, relay
        case unknown(Int)

        package static let known: [(value: Self, number: Int)] = [
            (.all, Int(GST_WEBRTC_ICE_TRANSPORT_POLICY_ALL.rawValue)),
            (.relay, Int(GST_WEBRTC_ICE_TRANSPORT_POLICY_RELAY.rawValue)),
        ]

        package var unknownNumber: Int? { if case .unknown(let number) = self { number } else { nil } }
    }

    /// A transceiver's direction (GstWebRTCRTPTransceiverDirection): `add-transceiver`'s argument.
    package enum TransceiverDirection: GEnumeration, Sendable {
        case none, inactive, sendonly, recvonly, sendrecv
        case unknown(Int)

        package static let known: [(value: Self, number: Int)] = [
            (.none, Int(GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_NONE.rawValue)),
            (.inactive, Int(GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_INACTIVE.rawValue)),
            (.sendonly, Int(GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_SENDONLY.rawValue)),
            (.recvonly, Int(GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_RECVONLY.rawValue)),
            (.sendrecv, Int(GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_SENDRECV.rawValue)),
        ]

        package var unknownNumber: Int? { if case .unknown(let number) = self { number } else { nil } }
    }

    /// A transceiver's forward error correction (GstWebRTCFECType).
    package enum FECType: GEnumeration, Sendable {
        case none, ulpRED
        case unknown(Int)

        package static let known: [(value: Self, number: Int)] = [
            (.none, Int(GST_WEBRTC_FEC_TYPE_NONE.rawValue)),
            (.ulpRED, Int(GST_WEBRTC_FEC_TYPE_ULP_RED.rawValue)),
        ]

        package var unknownNumber: Int? { if case .unknown(let number) = self { number } else { nil } }
    }

    // MARK: Properties

    package static let bundlePolicy = PropertyKey<BundlePolicy>("bundle-policy")
    package static let iceTransportPolicy = PropertyKey<ICETransportPolicy>("ice-transport-policy")
    /// The jitter buffers' latency in milliseconds (reaches only those made after it changed).
    package static let latency = PropertyKey<UInt>("latency")
    /// "stun://host:port".
    package static let stunServer = PropertyKey<String>("stun-server")
    /// The `GstWebRTCICE` object behind the transports.
    package static let iceAgent = PropertyKey<Object>("ice-agent")
    /// A webrtcbin pad's transceiver.
    package static let padTransceiver = PropertyKey<Object>("transceiver")

    /// The four states as they are now (each readable since 1.16).
    package var signalingState: SignalingState { enumProperty(Self.signalingStateKey, default: .closed) }
    package var iceConnectionState: ICEConnectionState { enumProperty(Self.iceConnectionStateKey, default: .new) }
    package var iceGatheringState: ICEGatheringState { enumProperty(Self.iceGatheringStateKey, default: .new) }
    package var connectionState: PeerConnectionState { enumProperty(Self.connectionStateKey, default: .new) }

    static let signalingStateKey = PropertyKey<SignalingState>("signaling-state")
    static let iceConnectionStateKey = PropertyKey<ICEConnectionState>("ice-connection-state")
    static let iceGatheringStateKey = PropertyKey<ICEGatheringState>("ice-gathering-state")
    static let connectionStateKey = PropertyKey<PeerConnectionState>("connection-state")

    private func enumProperty<State: GEnumeration>(_ key: PropertyKey<State>, default fallback: State) -> State {
        // webrtcbin has had these readable properties since 1.16: `get` cannot throw for them.
        (try? get(key)) ?? fallback
    }
}

/// The properties the WebRTC layer sets on a WebRTC transceiver (GstWebRTCRTPTransceiver and
/// webrtcbin's subclass of it).
package enum TransceiverProperty {
    package static let doNack = PropertyKey<Bool>("do-nack")
    package static let fecType = PropertyKey<WebRTCBin.FECType>("fec-type")
    package static let fecPercentage = PropertyKey<UInt>("fec-percentage")
    package static let codecPreferences = PropertyKey<Caps>("codec-preferences")
}

/// The properties the WebRTC layer sets on a transport's `dtlssrtpdec`.
package enum DTLSDecoderProperty {
    /// The certificate and key, PEM-encoded, that the transport's DTLS uses.
    package static let pem = PropertyKey<String>("pem")
}

/// The properties the WebRTC layer sets on webrtcbin's `rtpbin`.
package enum RTPBinProperty {
    /// The smallest correction of a stream's offset from the sender reports, in nanoseconds.
    package static let minTsOffset = PropertyKey<UInt64>("min-ts-offset")
    package static let rtcpSyncSendTime = PropertyKey<Bool>("rtcp-sync-send-time")
}

/// The properties the WebRTC layer sets on webrtcbin's `rtpsession`s.
package enum RTPSessionProperty {
    /// The floor under the report interval, in nanoseconds (T_rr_interval under AVPF).
    package static let rtcpMinInterval = PropertyKey<UInt64>("rtcp-min-interval")
    /// The RTCP allowance (values above 1 are bits per second).
    package static let rtcpFraction = PropertyKey<Double>("rtcp-fraction")
    /// Packets in sequence a new source needs before its first is passed on.
    package static let probation = PropertyKey<UInt>("probation")
    /// The far end's transport-wide feedback over the last interval (a structure).
    package static let twccStats = PropertyKey<Structure>("twcc-stats")
}

/// The properties the WebRTC layer sets on webrtcbin's `rtpjitterbuffer`s.
package enum JitterBufferProperty {
    package static let latency = PropertyKey<UInt>("latency")
    package static let fastStartMinPackets = PropertyKey<UInt>("faststart-min-packets")
    package static let rtxNextSeqnum = PropertyKey<Bool>("rtx-next-seqnum")
    package static let doRetransmission = PropertyKey<Bool>("do-retransmission")
    /// Milliseconds to wait before asking for a missing packet (-1: from the jitter).
    package static let rtxDelay = PropertyKey<Int32>("rtx-delay")
}

/// The properties the WebRTC layer sets on the transport's libnice agent (`NiceAgent`).
package enum NiceAgentProperty {
    package static let stunInitialTimeout = PropertyKey<UInt>("stun-initial-timeout")
    package static let stunMaxRetransmissions = PropertyKey<UInt>("stun-max-retransmissions")
    package static let stunPacingTimer = PropertyKey<UInt>("stun-pacing-timer")
    package static let controllingMode = PropertyKey<Bool>("controlling-mode")
    package static let upnp = PropertyKey<Bool>("upnp")
}

// MARK: Signals with typed arguments

extension WebRTCBin {
    /// `on-negotiation-needed`.
    package func onNegotiationNeeded(_ handler: @escaping @Sendable () -> Void) throws(GStreamerError) -> SignalConnection {
        try connect("on-negotiation-needed") { _ in handler() }
    }

    /// `on-ice-candidate`: a local candidate for media section `mlineIndex`.
    package func onICECandidate(_ handler: @escaping @Sendable (_ mlineIndex: Int, _ candidate: String) -> Void) throws(GStreamerError)
        -> SignalConnection {
        try connect("on-ice-candidate") { arguments in
            guard let mline = arguments[1].intValue ?? arguments[1].uintValue.map({ Int($0) }),
                  let candidate = arguments[2].stringValue else { return }
            handler(mline, candidate)
        }
    }

    /// One of the four states changed (`notify::` each); read them in the handler.
    package func onStateChange(_ handler: @escaping @Sendable (WebRTCBin) -> Void) throws(GStreamerError) -> [SignalConnection] {
        var connections: [SignalConnection] = []
        do throws(GStreamerError) {
            for key in [Self.signalingStateKey.name, Self.iceConnectionStateKey.name, Self.iceGatheringStateKey.name, Self.connectionStateKey.name] {
                connections.append(try connect("notify::\(key)") { [weak self] _ in
                    guard let self else { return }
                    handler(self)
                })
            }
        } catch {
            for connection in connections { connection.cancel() }
            throw error
        }
        return connections
    }

    /// `deep-element-added`: an element webrtcbin (or a bin inside it) made.
    package func onDeepElementAdded(_ handler: @escaping @Sendable (Element) -> Void) throws(GStreamerError) -> SignalConnection {
        try connect("deep-element-added") { arguments in
            guard case .object(let object?) = arguments[2], let element = object as? Element else { return }
            handler(element)
        }
    }

    /// `on-data-channel`: a channel the far end opened.
    package func onDataChannel(_ handler: @escaping @Sendable (DataChannel) -> Void) throws(GStreamerError) -> SignalConnection {
        try connect("on-data-channel") { arguments in
            guard case .object(let channel as DataChannel) = arguments[1] else { return }
            handler(channel)
        }
    }

    /// `pad-added`, for src pads only: an incoming stream.
    package func onSourcePadAdded(_ handler: @escaping @Sendable (Pad) -> Void) throws(GStreamerError) -> SignalConnection {
        try connect("pad-added") { arguments in
            guard case .object(let pad as Pad) = arguments[1], pad.direction == .source else { return }
            handler(pad)
        }
    }

    /// `on-new-transceiver`: a transceiver webrtcbin made itself (for a remote offer's m-line).
    package func onNewTransceiver(_ handler: @escaping @Sendable (Object) -> Void) throws(GStreamerError) -> SignalConnection {
        try connect("on-new-transceiver") { arguments in
            guard case .object(let transceiver?) = arguments[1] else { return }
            handler(transceiver)
        }
    }
}
