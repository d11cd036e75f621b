import MediaPipeline

/// The caller's application media: see `ApplicationMediaCall`.
extension WebRtcConnection: ApplicationMediaCall {
    public var mediaEndpoint: MediaEndpoint { MediaEndpoint(peerConnection) }
}

/// The caller's application media, on the call's connection: see `ApplicationMediaCall`.
extension VideoCall: ApplicationMediaCall {
    public var mediaEndpoint: MediaEndpoint { MediaEndpoint(webRtcConnection?.peerConnection) }
}
