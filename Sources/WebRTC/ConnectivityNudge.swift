import GStreamer
import Synchronization

/// Once this side's ICE is connected, sends the far end a connectivity check of its own every
/// `interval` until the far end sends anything over the transport (so its ICE is connected too).
///
/// libnice 0.1.21 resends an unanswered check after max(500 ms, 20 ms × pairs), doubling each
/// time (its `stun-initial-timeout` is for TURN and discovery, not checks), so at 20 % loss each
/// way (a check and its answer both get through 64 % of the time) one side now and then waited
/// 3.5 s or 7.5 s for a check that the other side had long finished: seen as one end connected
/// at 1.0 s and the other at 4.0 s, and as set-ups of 9.7 s. libwebrtc pings an unconfirmed pair
/// every ~50 ms; libnice has no setting for that. What it does have: a check that arrives on a pair
/// whose own check is still unanswered (or has failed) makes it send a new one at once (a
/// triggered check, RFC 8445 §7.3.1.4). So the side that is through sends those arrivals itself:
/// a Binding request with the far end's credentials from the SDPs, through the selected pair (the
/// transport's nicesink). The far end answers it (its answer matches nothing here and is
/// dropped) and checks again, with a fresh round trip each time. A peer that is already through
/// only answers. Bounded to `maximumNudges`; ends with the session.
final class ConnectivityNudge: Sendable {
    static let interval: Duration = .milliseconds(150)
    static let maximumNudges = 60

    /// What the checks are made of: both ufrags and the far end's password from the SDPs, and
    /// this side's ICE role (the far end must see the same role in every check of ours).
    struct Credentials: Equatable {
        var localUfrag: String
        var remoteUfrag: String
        var remotePassword: String
        var controlling: Bool

        /// RFC 8839 §5.4: a ufrag is 4 to 256 characters, a password 22 to 256. The far end's come
        /// from its SDP; outside those bounds (a STUN attribute's length is 16 bits) nothing is sent.
        static let ufragLengths = 4...256, passwordLengths = 22...256

        init?(localSDP: String, remoteSDP: String, controlling: Bool) {
            guard let localUfrag = SDPInspection.iceUfrag(localSDP), let remoteUfrag = SDPInspection.iceUfrag(remoteSDP),
                  let remotePassword = SDPInspection.icePassword(remoteSDP),
                  Self.ufragLengths.contains(localUfrag.utf8.count), Self.ufragLengths.contains(remoteUfrag.utf8.count),
                  Self.passwordLengths.contains(remotePassword.utf8.count) else { return nil }
            self.localUfrag = localUfrag
            self.remoteUfrag = remoteUfrag
            self.remotePassword = remotePassword
            self.controlling = controlling
        }
    }

    /// What the loop does next.
    enum Step: Equatable { case wait, nudge, finish }

    private struct State {
        var nudges = 0
        var finished = false
        var task: Task<Void, Never>?
    }

    private let state = Mutex(State())
    /// RFC 8445's tie-breaker, one per session: it matters only if both ends claim one role,
    /// which these checks never do (they carry this side's own).
    private let tieBreaker = UInt64.random(in: .min ... .max)

    /// Starts the loop that nudges through `sink` (the transport's nicesink). `connected` and
    /// `heardFarEnd` are read each turn; `credentials` once a nudge is due (nil: not readable yet).
    func start(sink: Pad, connected: @escaping @Sendable () -> Bool, heardFarEnd: @escaping @Sendable () -> Bool,
               credentials: @escaping @Sendable () -> Credentials?) {
        let task = Task { [weak self] in
            var known: Credentials?
            while !Task.isCancelled {
                // Cancelled: the loop ends at its condition.
                try? await Task.sleep(for: Self.interval)
                guard let self else { return }
                // A stream must have begun on the transport (a segment) before anything is
                // chained into it: the DTLS client's starts with its first flight, the server's
                // only with its answer. The side that is through first is the controlled one
                // (regular nomination), which is the DTLS client whenever ECVKit answers.
                switch self.next(connected: connected() && sink.hasSegment, heardFarEnd: heardFarEnd()) {
                case .finish: return
                case .wait: continue
                case .nudge:
                    known = known ?? credentials()
                    guard let known else { continue }
                    let check = STUNBindingRequest.iceCheck(transactionID: (0..<12).map { _ in UInt8.random(in: .min ... .max) },
                                                            localUfrag: known.localUfrag, remoteUfrag: known.remoteUfrag,
                                                            controlling: known.controlling, tieBreaker: self.tieBreaker)
                    // The transport is gone or flushing: nothing more to nudge through.
                    guard sink.chain(check.encoded(password: known.remotePassword, hmacSHA1: MessageAuthentication.hmacSHA1)) else { return }
                }
            }
        }
        state.withLock { $0.task = task }
    }

    /// Whether to nudge now: only while this side is through and has heard nothing from the far
    /// end, `maximumNudges` at most; hearing it ends the nudging for good.
    func next(connected: Bool, heardFarEnd: Bool) -> Step {
        state.withLock { state in
            guard !state.finished else { return .finish }
            guard !heardFarEnd, state.nudges < Self.maximumNudges else {
                state.finished = true
                return .finish
            }
            guard connected else { return .wait }
            state.nudges += 1
            return .nudge
        }
    }

    /// The session goes: no more nudges.
    func stop() {
        let task = state.withLock { state in
            state.finished = true
            return state.task
        }
        task?.cancel()
    }
}
