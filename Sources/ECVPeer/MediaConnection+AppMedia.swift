import ECV

/// Application media on a peer call (the remote peer's audio, played audio, voice activity):
/// see `ApplicationMediaCall`.
extension MediaConnection: ApplicationMediaCall {
    public var mediaEndpoint: MediaEndpoint { MediaEndpoint(state.withLock { $0.leg }?.peer) }
}
