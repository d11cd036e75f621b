import Foundation
import GStreamer
import Synchronization

/// Sends this side's last DTLS handshake flight again, every `interval`, while the far end has
/// answered nothing new: GStreamer 1.22's DTLS (dtlssrtpenc over OpenSSL) retransmits a lost
/// flight only after OpenSSL's timer, 1 s and doubling each time, which neither the element nor
/// webrtcbin lets anyone set. Under 20 % loss a handshake of four flights (one datagram per
/// message) then took 1.4–11.6 s, where libwebrtc's takes about a second.
///
/// The datagrams go out again byte for byte, record sequence numbers included, so the far end's
/// DTLS replay window discards every copy of what it already has and takes only what was lost;
/// nothing in the handshake changes. A datagram counts as new from the far end when its
/// handshake content differs from all before it (OpenSSL's own retransmissions carry new record
/// numbers, the content is the same). It stops for good once the far end sends media or data
/// (its DTLS is done, so it has all of ours), after `maximumReplays` of one flight (OpenSSL's
/// timer is left to finish), or when the session goes. This side's own media says nothing about
/// the far end: the server is done first (on the client's Finished) and starts sending at once;
/// if its last flight (change cipher spec, Finished) is lost, only the server can send it again,
/// since the client's copies of its own flight are dropped by the server's replay window. Stopping
/// on our own media left that to OpenSSL's 1 s, 2 s, 4 s timer.
final class HandshakeReplay: Sendable {
    static let interval: Duration = .milliseconds(150)
    static let maximumReplays = 60
    /// A flight of OpenSSL's is a few datagrams; anything longer is not a handshake flight.
    static let maximumFlightDatagrams = 16
    /// A handshake is a handful of messages; a far end that sends more distinct ones than this is
    /// not doing a handshake we can help, and what we keep of it stays bounded.
    static let maximumFarEndMessages = 64

    struct State {
        /// This side's current flight: the datagrams as sent, and their content keys.
        var flight: [[UInt8]] = []
        var flightKeys: Set<[UInt8]> = []
        /// Set when the far end sent something new after the flight began: the next handshake
        /// datagram of ours starts a new flight, and the current one is not replayed.
        var answered = true
        var lastSent: ContinuousClock.Instant = .now
        var replays = 0
        var seenFromFarEnd: Set<[UInt8]> = []
        var finished = false
        var task: Task<Void, Never>?
    }
    private let state = Mutex(State())

    /// What crosses the transport: DTLS handshake (or change-cipher-spec) records, anything
    /// else of DTLS, media (SRTP/SRTCP, after the handshake only), or something else (STUN).
    enum Datagram: Equatable {
        case handshake(key: [UInt8])
        case applicationData
        case media
        case other

        /// RFC 7983's demultiplexing by first byte, then the DTLS record header (type, version,
        /// epoch, sequence number, length; 13 bytes). The key is the record's type, epoch and
        /// everything after its sequence number.
        init(_ bytes: UnsafeRawBufferPointer) {
            guard let first = bytes.first else { self = .other; return }
            switch first {
            case 20, 22:
                guard bytes.count > 13 else { self = .other; return }
                self = .handshake(key: [first] + Array(bytes[3..<5]) + Array(bytes[11...]))
            case 21...63: self = first == 23 ? .applicationData : .other
            case 128...191: self = .media
            default: self = .other
            }
        }
    }

    /// Starts replaying into `sink` (the transport's nicesink), the flight noted by `sent(_:)`.
    func start(sink: Pad) {
        let task = Task { [weak self] in
            while !Task.isCancelled {
                // Cancelled: the loop ends at its condition.
                try? await Task.sleep(for: Self.interval / 3)
                guard let self, let flight = self.due() else { return }
                for datagram in flight where !sink.chain(datagram) { return } // the transport is gone or flushing
            }
        }
        state.withLock { $0.task = task }
    }

    /// A datagram this side sent (the nicesink's input) at `now`; false once the probe is no
    /// longer needed.
    func sent(_ bytes: UnsafeRawBufferPointer, at now: ContinuousClock.Instant = .now) -> Bool {
        note(Datagram(bytes), ourOwn: true) { state, key in
            guard !state.flightKeys.contains(key) else { return } // a replay or OpenSSL's own resend
            if state.answered {
                state.flight = []
                state.flightKeys = []
                state.replays = 0
                state.answered = false
            }
            guard state.flight.count < Self.maximumFlightDatagrams else { return }
            state.flight.append(Array(bytes))
            state.flightKeys.insert(key)
            state.lastSent = now
        }
    }

    /// A datagram the far end sent (the nicesrc's output); false once the probe is no longer needed.
    func received(_ bytes: UnsafeRawBufferPointer) -> Bool {
        note(Datagram(bytes), ourOwn: false) { state, key in
            guard state.seenFromFarEnd.count < Self.maximumFarEndMessages else { return Self.finish(&state) }
            if state.seenFromFarEnd.insert(key).inserted { state.answered = true }
        }
    }

    /// Either direction: a handshake record goes to `handshake`; media or data from the far end
    /// means its DTLS is done, which ends the replay (false: the probe can go); anything else,
    /// our own media included, is ignored.
    private func note(_ datagram: Datagram, ourOwn: Bool, handshake: (inout State, [UInt8]) -> Void) -> Bool {
        state.withLock { state in
            guard !state.finished else { return false }
            switch datagram {
            case .handshake(let key):
                handshake(&state, key)
                return true
            case .applicationData, .media:
                guard !ourOwn else { return true }
                Self.finish(&state)
                return false
            case .other:
                return true
            }
        }
    }

    /// The session goes: no more replays.
    func stop() {
        let task = state.withLock { state in
            Self.finish(&state)
            return state.task
        }
        task?.cancel()
    }

    /// The flight to send again at `now`: empty when nothing is due, nil once replaying is over.
    func due(at now: ContinuousClock.Instant = .now) -> [[UInt8]]? {
        state.withLock { state -> [[UInt8]]? in
            guard !state.finished else { return nil }
            guard !state.answered, !state.flight.isEmpty, now - state.lastSent >= Self.interval else { return [] }
            guard state.replays < Self.maximumReplays else {
                Self.finish(&state)
                return nil
            }
            state.replays += 1
            state.lastSent = now
            return state.flight
        }
    }

    private static func finish(_ state: inout State) {
        state.finished = true
        state.flight = []
        state.flightKeys = []
        state.seenFromFarEnd = []
    }
}
