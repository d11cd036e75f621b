import GLibCore
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
/// only answers.
///
/// Neither side is through while the controlling side's nominating check (webrtcbin's libnice
/// nominates regularly, after an ordinary check of the pair succeeded) or its answer is lost: the
/// controlled side's own checks have succeeded and it sends none, and the nominating check goes
/// again only on libnice's schedule, with nothing through to nudge it (four misses in a row at
/// 20 % loss each way, ~1.7 % of calls, took 8 s). So, not through 450 ms after both descriptions
/// are there, each side nudges too, through its host candidates' own sockets (libnice's, found
/// among the process's descriptors and duplicated: `SharedDatagramSocket`), to each candidate of
/// the far end's it knows: a check that reaches the controlling side on a pair whose nominating
/// check is in progress makes it send that check again at once (libnice's
/// `priv_schedule_triggered_check`), and one that reaches the controlled side makes it check the
/// pair again. Bounded to `maximumNudges` in each phase and `maximumPathsPerTurn`; ends with the
/// session, and the duplicated sockets are closed once through.
final class ConnectivityNudge: Sendable {
    static let interval: Duration = .milliseconds(150)
    static let maximumNudges = 60
    /// Not through after this many turns with both descriptions there (450 ms: libnice's own first
    /// resend of a check is due at 500 ms), the nudges begin before ICE is through.
    static let turnsBeforeEarlyNudges = 3
    /// Each nudge costs the far end an answer and a check of its own: a turn takes at most this
    /// many pairs of a local socket and a far-end candidate, the next turn the next ones.
    static let maximumPathsPerTurn = 8

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

    /// What the loop does next: wait, nudge through the selected pair, nudge through the
    /// candidates' own sockets before any pair is selected, or stop for good.
    enum Step: Equatable { case wait, nudge, nudgeThroughSockets, finish }

    /// What the descriptions say, read until both are there.
    struct Descriptions {
        var local: String
        var remote: String
        var controlling: Bool
    }

    private struct State {
        var nudges = 0
        var earlyNudges = 0
        /// Turns since both descriptions were there with nothing sendable.
        var turnsUnconnected = 0
        var finished = false
        var task: Task<Void, Never>?
        var candidates = CandidateBook()
        /// Duplicates of this side's host candidates' sockets, looked for once each.
        var sockets: [DatagramEndpoint: SharedDatagramSocket] = [:]
        var searched: Set<DatagramEndpoint> = []
    }

    private let state = Mutex(State())
    /// RFC 8445's tie-breaker, one per session: it matters only if both ends claim one role,
    /// which these checks never do (they carry this side's own).
    private let tieBreaker = UInt64.random(in: .min ... .max)

    /// Starts the loop that nudges through `sink` (the transport's nicesink) once through, and
    /// through the sockets of this side's host candidates before. `connected` and `heardFarEnd`
    /// are read each turn; `descriptions` each turn until both are there.
    func start(sink: Pad, connected: @escaping @Sendable () -> Bool, heardFarEnd: @escaping @Sendable () -> Bool,
               descriptions: @escaping @Sendable () -> Descriptions?) {
        let task = Task { [weak self] in
            var known: Credentials?
            while !Task.isCancelled {
                // Cancelled: the loop ends at its condition.
                try? await Task.sleep(for: Self.interval)
                guard let self else { return }
                if known == nil, let read = descriptions() {
                    known = Credentials(localSDP: read.local, remoteSDP: read.remote, controlling: read.controlling)
                    self.noteCandidates(localSDP: read.local, remoteSDP: read.remote)
                }
                // A stream must have begun on the transport (a segment) before anything is
                // chained into it: the DTLS client's starts with its first flight, the server's
                // only with its answer. The side that is through first is the controlled one
                // (regular nomination), which is the DTLS client whenever ECVKit answers.
                switch self.next(sendable: connected() && sink.hasSegment, heardFarEnd: heardFarEnd(), described: known != nil) {
                case .finish:
                    self.closeSockets()
                    return
                case .wait: continue
                case .nudge:
                    self.closeSockets()
                    guard let known else { continue }
                    // The transport is gone or flushing: nothing more to nudge through.
                    guard sink.chain(self.check(known)) else { return }
                case .nudgeThroughSockets:
                    guard let known else { continue }
                    for path in self.pathsBeforeThrough() { path.socket.send(self.check(known), to: path.destination) }
                }
            }
        }
        state.withLock { $0.task = task }
    }

    private func check(_ credentials: Credentials) -> [UInt8] {
        STUNBindingRequest.iceCheck(transactionID: (0..<12).map { _ in UInt8.random(in: .min ... .max) },
                                    localUfrag: credentials.localUfrag, remoteUfrag: credentials.remoteUfrag,
                                    controlling: credentials.controlling, tieBreaker: tieBreaker)
            .encoded(password: credentials.remotePassword, hmacSHA1: MessageAuthentication.hmacSHA1)
    }

    /// Whether to nudge now. `sendable`: this side is through and its transport can take a check;
    /// then through the selected pair, `maximumNudges` at most. Otherwise, with both descriptions
    /// there: through the candidates' sockets from the `turnsBeforeEarlyNudges`th turn on (when
    /// libnice's own first resend is due), `maximumNudges` at most. That includes a side that is
    /// through while its transport is not yet sendable: a DTLS server's stream begins only with
    /// its answer to the client's first flight, which the client sends once it is through.
    /// Hearing the far end ends the nudging for good.
    func next(sendable: Bool, heardFarEnd: Bool, described: Bool) -> Step {
        state.withLock { state in
            guard !state.finished else { return .finish }
            guard !heardFarEnd, state.nudges < Self.maximumNudges else {
                state.finished = true
                return .finish
            }
            if sendable {
                state.nudges += 1
                return .nudge
            }
            guard described else { return .wait }
            state.turnsUnconnected += 1
            guard state.turnsUnconnected >= Self.turnsBeforeEarlyNudges, state.earlyNudges < Self.maximumNudges else { return .wait }
            state.earlyNudges += 1
            return .nudgeThroughSockets
        }
    }

    /// A candidate this side gathered (webrtcbin's `on-ice-candidate`).
    func noteLocalCandidate(_ line: String) {
        guard let candidate = SDPInspection.udpCandidate(line) else { return }
        state.withLock { $0.candidates.addLocal(candidate) }
    }

    /// A candidate the far end sent.
    func noteRemoteCandidate(_ line: String) {
        guard let candidate = SDPInspection.udpCandidate(line) else { return }
        state.withLock { $0.candidates.addRemote(candidate) }
    }

    private func noteCandidates(localSDP: String, remoteSDP: String) {
        let local = SDPInspection.udpCandidates(localSDP), remote = SDPInspection.udpCandidates(remoteSDP)
        state.withLock { state in
            for candidate in local { state.candidates.addLocal(candidate) }
            for candidate in remote { state.candidates.addRemote(candidate) }
        }
    }

    /// Each socket of this side's host candidates to each far-end candidate of its family, in the
    /// order libnice checks them, at most `maximumPathsPerTurn` of them a turn. A host candidate's
    /// socket is looked for once, when first needed.
    private func pathsBeforeThrough() -> [(socket: SharedDatagramSocket, destination: DatagramEndpoint)] {
        let wanted = state.withLock { state in Set(state.candidates.localHosts.keys).subtracting(state.searched) }
        let found = SharedDatagramSocket.find(boundTo: wanted)
        return state.withLock { state in
            state.searched.formUnion(wanted)
            guard !state.finished else {
                for socket in found.values { socket.close() }
                return []
            }
            state.sockets.merge(found) { old, _ in old }
            let paths = state.candidates.pairs().compactMap { pair in
                state.sockets[pair.local].map { (socket: $0, destination: pair.remote) }
            }
            guard paths.count > Self.maximumPathsPerTurn else { return paths }
            // More paths than a turn takes: each turn the next ones, round the list.
            let first = (state.earlyNudges - 1) * Self.maximumPathsPerTurn
            return (first..<first + Self.maximumPathsPerTurn).map { paths[$0 % paths.count] }
        }
    }

    private func closeSockets() {
        let sockets = state.withLock { state in defer { state.sockets = [:] }; return state.sockets.values }
        for socket in sockets { socket.close() }
    }

    /// The session goes: no more nudges.
    func stop() {
        let task = state.withLock { state in
            state.finished = true
            return state.task
        }
        task?.cancel()
        closeSockets()
    }
}

/// The UDP candidates the nudges before ICE is through go from and to: this side's host
/// candidates (whose sockets libnice bound; a server-reflexive one leaves from its host's) and the
/// far end's host, server- and peer-reflexive ones (a relayed one is reached through a TURN
/// server, not directly), each with its priority. Bounded: a far end's candidates are outside
/// input.
struct CandidateBook {
    static let maximumLocal = 8, maximumRemote = 16
    private(set) var localHosts: [DatagramEndpoint: UInt32] = [:]
    private(set) var remotes: [DatagramEndpoint: UInt32] = [:]

    mutating func addLocal(_ candidate: SDPInspection.UDPCandidate) {
        guard candidate.type == "host", localHosts.count < Self.maximumLocal,
              let endpoint = DatagramEndpoint(host: candidate.address, port: candidate.port) else { return }
        localHosts[endpoint] = candidate.priority
    }

    mutating func addRemote(_ candidate: SDPInspection.UDPCandidate) {
        guard ["host", "srflx", "prflx"].contains(candidate.type), remotes.count < Self.maximumRemote,
              let endpoint = DatagramEndpoint(host: candidate.address, port: candidate.port) else { return }
        remotes[endpoint] = candidate.priority
    }

    /// Each local host candidate with each far-end candidate of its family, the pairs libnice
    /// checks first (and nominates, once valid) first: by RFC 8445's pair priority, which orders
    /// pairs the same for either role.
    func pairs() -> [(local: DatagramEndpoint, remote: DatagramEndpoint)] {
        var ranked: [(priority: UInt64, order: String, local: DatagramEndpoint, remote: DatagramEndpoint)] = []
        for (local, localPriority) in localHosts {
            for (remote, remotePriority) in remotes where remote.isIPv6 == local.isIPv6 {
                ranked.append((Self.pairPriority(localPriority, remotePriority), "\(local) \(remote)", local, remote))
            }
        }
        // Equal priorities in a fixed order, so the turns go round the same list.
        ranked.sort { $0.priority != $1.priority ? $0.priority > $1.priority : $0.order < $1.order }
        return ranked.map { ($0.local, $0.remote) }
    }

    /// RFC 8445 §6.1.2.3, with the two candidates' priorities in either order (the role only
    /// breaks ties). Priorities are held to the RFC's 2^31 − 1, so the sum stays under 2^63.
    static func pairPriority(_ a: UInt32, _ b: UInt32) -> UInt64 {
        let bound = SDPInspection.candidatePriorities
        func held(_ priority: UInt32) -> UInt64 { UInt64(min(max(priority, bound.lowerBound), bound.upperBound)) }
        return (held(min(a, b)) << 32) + 2 * held(max(a, b)) + (a > b ? 1 : 0)
    }
}
