import GStreamer
import MediaPipeline

extension PeerConnection {
    /// A data channel with `config`. The offerer (or both sides, for negotiated channels) creates
    /// it; the answerer binds the handle when the remote side opens a channel with this label.
    /// Sending before it opens queues the message.
    package func openDataChannel(_ config: DataChannelConfig) -> DataChannelHandle {
        let alreadyOpened = channels.localConfigs.contains { $0.label == config.label }
        channels.registerLocal(config)
        let (handle, _) = channels.handle(for: config.label)
        if !alreadyOpened, let session, role == .offerer || config.negotiated { createChannel(config, on: session) }
        return handle
    }

    /// The channels this end creates on a new session: all of the offerer's, the negotiated ones
    /// on both sides.
    func createConfiguredChannels(on session: PeerSession) {
        for config in channels.localConfigs where role == .offerer || config.negotiated {
            createChannel(config, on: session)
        }
    }

    private func createChannel(_ config: DataChannelConfig, on session: PeerSession) {
        let (handle, _) = channels.handle(for: config.label)
        do throws(GStreamerError) {
            let channel = try session.webrtc.createDataChannel(label: config.label, options: config.webrtcOptions)
            try handle.bind(channel)
        } catch {
            emit(.error("cannot create data channel '\(config.label)': \(error)"))
        }
    }
}
