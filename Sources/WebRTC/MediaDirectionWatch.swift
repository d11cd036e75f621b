import MediaPipeline

/// One way one kind of media travels in a call.
package struct MediaDirection: Sendable, Hashable, CustomStringConvertible {
    package var kind: MediaKind
    /// True for what this end sends, false for what it receives.
    package var sending: Bool

    package init(kind: MediaKind, sending: Bool) {
        self.kind = kind
        self.sending = sending
    }

    package var description: String { "\(kind.rawValue) \(sending ? "sent" : "received")" }
}

/// Notices a negotiated direction that carries no RTP: a codec both ends agreed on that one of
/// them still cannot send, a far end that announces video and never sends it. Each direction the
/// last negotiation said travels must see its packet count grow; one that has not grown for
/// `silence` while the transport is connected is reported once (per negotiation), with whether
/// it ever carried a packet. A pure state machine: the liveness watch feeds it counts and times.
struct MediaDirectionWatch {
    /// How long a negotiated direction may carry nothing before it is reported: longer than any
    /// set-up (a key frame, a codec change) and than a freeze the loss recovery mends.
    static let silence: Duration = .seconds(5)

    private struct Progress {
        var count: UInt64 = 0
        var since: ContinuousClock.Instant
        var everCarried = false
        var reported = false
    }
    private var progress: [MediaDirection: Progress] = [:]

    /// A new negotiation: these directions are expected from `now` on (reports start afresh).
    mutating func expect(_ directions: Set<MediaDirection>, now: ContinuousClock.Instant) {
        progress = Dictionary(uniqueKeysWithValues: directions.map { ($0, progress[$0].map { var kept = $0; kept.since = now; kept.reported = false; return kept } ?? Progress(since: now)) })
    }

    /// What the last negotiation says the far end sends, for how long its silence may last
    /// (`FarEndSilence`): media when it sends us any, reports alone when it only receives.
    var farEnd: FarEndSilence.FarEnd {
        progress.isEmpty ? .noMedia : progress.keys.contains { !$0.sending } ? .media : .reportsOnly
    }

    /// The transport is not connected (or not yet): silence does not count meanwhile.
    mutating func pause(now: ContinuousClock.Instant) {
        for direction in progress.keys { progress[direction]?.since = now }
    }

    /// Takes the packet counts now; returns the directions that just passed `silence` without a
    /// packet, with whether each had carried any before.
    mutating func check(counts: [MediaDirection: UInt64], now: ContinuousClock.Instant) -> [(MediaDirection, everCarried: Bool)] {
        var silent: [(MediaDirection, everCarried: Bool)] = []
        for (direction, state) in progress {
            var next = state
            let count = counts[direction] ?? 0
            if count != state.count {
                next.count = count
                next.since = now
                next.everCarried = next.everCarried || count > 0
            } else if !state.reported, now - state.since >= Self.silence {
                next.reported = true
                silent.append((direction, next.everCarried))
            }
            progress[direction] = next
        }
        return silent.sorted { $0.0.description < $1.0.description }
    }
}
