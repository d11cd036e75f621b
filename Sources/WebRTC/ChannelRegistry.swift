import GStreamer
import MediaPipeline
import Synchronization

/// The data channel handles of a peer connection, by label, shared between the actor and
/// webrtcbin's signal threads (a remote channel must be bound before its first message).
final class ChannelRegistry: Sendable {
    private struct State {
        var handles: [String: DataChannelHandle] = [:]
        /// Channels this side creates on every (re)built webrtcbin.
        var localConfigs: [String: DataChannelConfig] = [:]
    }
    private let state = Mutex(State())

    /// The handle for `label`, creating it when new. Returns whether it was created.
    func handle(for label: String) -> (handle: DataChannelHandle, isNew: Bool) {
        state.withLock { state in
            if let existing = state.handles[label] { return (existing, false) }
            let handle = DataChannelHandle(label: label)
            state.handles[label] = handle
            return (handle, true)
        }
    }

    func registerLocal(_ config: DataChannelConfig) {
        state.withLock { $0.localConfigs[config.label] = config }
    }

    var localConfigs: [DataChannelConfig] { state.withLock { Array($0.localConfigs.values).sorted { $0.label < $1.label } } }
    var all: [DataChannelHandle] { state.withLock { Array($0.handles.values) } }
}
