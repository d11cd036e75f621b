import ECV

/// The bot's application media (the caller's audio, prompts and speech, voice activity,
/// barge-in): see `ApplicationMediaCall`.
extension AgentCall: ApplicationMediaCall {
    public var mediaEndpoint: MediaEndpoint { MediaEndpoint(peerConnection) }
}
