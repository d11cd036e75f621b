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
            let isNew = state.handles[label] == nil
            return (Self.handle(for: label, in: &state), isNew)
        }
    }

    /// The handle a channel the remote side opened binds to, and the configured label it was
    /// adopted as when its own label is not one we use.
    ///
    /// A configured label always gets its channel. A channel under another label, when it is
    /// reliable and a channel we configured is still without one, is adopted as that channel:
    /// an agent desktop or browser chooses its own label, and the call's text channel is defined
    /// by its role, not by its name. Anything else gets a handle of its own label.
    func handleForRemote(label: String, reliable: Bool) -> (handle: DataChannelHandle, adoptedAs: String?) {
        state.withLock { state in
            if state.localConfigs[label] != nil || !reliable {
                return (Self.handle(for: label, in: &state), nil)
            }
            if let free = state.localConfigs.keys.sorted().first(where: { state.handles[$0]?.isBound != true }) {
                return (Self.handle(for: free, in: &state), free)
            }
            return (Self.handle(for: label, in: &state), nil)
        }
    }

    private static func handle(for label: String, in state: inout State) -> DataChannelHandle {
        if let existing = state.handles[label] { return existing }
        let handle = DataChannelHandle(label: label)
        state.handles[label] = handle
        return handle
    }

    func registerLocal(_ config: DataChannelConfig) {
        state.withLock { $0.localConfigs[config.label] = config }
    }

    var localConfigs: [DataChannelConfig] { state.withLock { Array($0.localConfigs.values).sorted { $0.label < $1.label } } }
    var all: [DataChannelHandle] { state.withLock { Array($0.handles.values) } }
}
