import MediaRuntime
import Synchronization

/// Whether far-end audio is played or silenced, applied to every incoming audio branch of every
/// session of a peer, including those that appear later (a rebuild, a renegotiation).
///
/// One lock orders both paths that touch the branches: a change applies to the branches that
/// exist under the lock, and a new branch is registered and given the current state under it, so
/// no branch is left with a stale state and two quick changes cannot land out of order.
final class RemotePlayback: Sendable {
    private let muted = Mutex(false)

    var isMuted: Bool { muted.withLock { $0 } }

    /// Sets the state and applies it to `receivers()` (read under the lock).
    func setMuted(_ value: Bool, receivers: () -> [ReceiveMedia]) throws(MediaRuntimeError) {
        try muted.withLock { muted throws(MediaRuntimeError) in
            muted = value
            for receiver in receivers() { try receiver.setPlaybackMuted(value) }
        }
    }

    /// Runs `register` (which records the new branch) and gives the branch the current state.
    func adopt(_ receiver: ReceiveMedia, register: () -> Void) throws(MediaRuntimeError) {
        try muted.withLock { muted throws(MediaRuntimeError) in
            register()
            if muted { try receiver.setPlaybackMuted(true) }
        }
    }
}
