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
/// nothing in the handshake changes. A datagram counts as new from the far end when it carries
/// handshake progress beyond anything before it (a later message, fragment or epoch; see
/// `DTLSDatagram`). Its bytes do not tell: OpenSSL resends a flight one record per datagram where it
/// first packed several into one, so a resent old flight looked new, and the client stopped
/// replaying its last flight while the server still waited for it (seen at 20 % loss: a call
/// left to OpenSSL's 1 s, 2 s, 4 s timer, 7 s to connect). It stops for good once the far end sends media or data
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

    struct State {
        /// This side's current flight: the datagrams as sent.
        var flight: [[UInt8]] = []
        /// The furthest this side's handshake has gone: a datagram not beyond it is a resend.
        var sentProgress: DTLSHandshakeProgress?
        /// Set when the far end sent something new after the flight began: the next handshake
        /// datagram of ours starts a new flight, and the current one is not replayed.
        var answered = true
        var lastSent: ContinuousClock.Instant = .now
        var replays = 0
        /// The furthest the far end's handshake has gone.
        var farEndProgress: DTLSHandshakeProgress?
        /// The highest epoch 0 record sequence number this side has sent (OpenSSL's or a replay's).
        var highestSequenceSent: UInt64 = 0
        var finished = false
        var task: Task<Void, Never>?
    }

    private let state = Mutex(State())

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
        note(DTLSDatagram(bytes), ourOwn: true) { state, progress in
            for record in DTLSRecord.all(in: bytes) where record.epoch == 0 {
                state.highestSequenceSent = max(state.highestSequenceSent, record.sequence)
            }
            // A replay, or OpenSSL's own resend however it packs it.
            if let sent = state.sentProgress, progress <= sent { return }
            state.sentProgress = progress
            if state.answered {
                state.flight = []
                state.replays = 0
                state.answered = false
            }
            guard state.flight.count < Self.maximumFlightDatagrams else { return }
            state.flight.append(Array(bytes))
            state.lastSent = now
        }
    }

    /// A datagram the far end sent (the nicesrc's output); false once the probe is no longer needed.
    func received(_ bytes: UnsafeRawBufferPointer) -> Bool {
        note(DTLSDatagram(bytes), ourOwn: false) { state, progress in
            if let seen = state.farEndProgress, progress <= seen { return }
            state.farEndProgress = progress
            state.answered = true
        }
    }

    /// Either direction: a handshake record goes to `handshake`; media or data from the far end
    /// means its DTLS is done, which ends the replay (false: the probe can go); anything else,
    /// our own media included, is ignored.
    private func note(_ datagram: DTLSDatagram, ourOwn: Bool, handshake: (inout State, DTLSHandshakeProgress) -> Void) -> Bool {
        state.withLock { state in
            guard !state.finished else { return false }
            switch datagram {
            case .handshake(let progress):
                handshake(&state, progress)
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
            var next = state.highestSequenceSent + 1
            let flight = state.flight.map { Self.renumberingChangeCipherSpec($0, from: &next) }
            state.highestSequenceSent = next - 1
            return flight
        }
    }

    /// `datagram` with each epoch 0 change cipher spec record given the next unused sequence
    /// number. The far end's OpenSSL drops a change cipher spec that comes before the messages
    /// ahead of it in the flight ("probably an out-of-order CCS"), after its replay window has
    /// marked the record's number as seen, so every byte-for-byte copy of it is dropped too and
    /// only OpenSSL's own resend (1 s, 2 s, 4 s later, with new numbers) gets the handshake on:
    /// at 20 % loss one call in twenty waited 4–7 s that way. An epoch 0 record carries no MAC,
    /// and a new number for a resent record is what RFC 6347 §4.2.4 asks for; handshake messages
    /// need none (OpenSSL keeps one that comes early), and epoch 1 records cannot have one (the
    /// number is authenticated) and need none (OpenSSL keeps a record of the next epoch).
    static func renumberingChangeCipherSpec(_ datagram: [UInt8], from next: inout UInt64) -> [UInt8] {
        var copy = datagram
        let records = datagram.withUnsafeBytes { DTLSRecord.all(in: $0) }
        for record in records where record.epoch == 0 && record.type == DTLSDatagram.RecordType.changeCipherSpec {
            for index in 0..<DTLSRecord.sequenceLength {
                let shift = UInt64(8 * (DTLSRecord.sequenceLength - 1 - index))
                copy[record.offset + DTLSRecord.sequenceOffset + index] = UInt8(truncatingIfNeeded: next >> shift)
            }
            next += 1
        }
        return copy
    }

    private static func finish(_ state: inout State) {
        state.finished = true
        state.flight = []
    }
}
