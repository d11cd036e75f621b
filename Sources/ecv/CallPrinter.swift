import ECV
import ECVProtocol
import Foundation
import GLibCore
import GStreamer

/// Prints a call's life for a person (queue position, states, a stats ticker) or as NDJSON.
final class CallPrinter: Sendable {
    let json: Bool
    private let started = ContinuousClock.now
    /// The calls whose CallEnded is printed: a stats sample still in flight must not follow a
    /// leg's final line (a transferred call's next leg prints on).
    private let ended = Locked<Set<String>>([])

    init(json: Bool) { self.json = json }

    var elapsed: Double { (ContinuousClock.now - started).seconds }

    func event(_ call: VideoCall, _ event: VideoCallEvent) {
        ended.withLock { ended in
            print(call, event)
            if event.type == .CallEnded || event.type == .TransferCompleted { ended.insert(call.rtcId) }
        }
    }

    private static func isCommand(_ text: String) -> Bool {
        if case .raw = DataChannelCommand(parsing: text) { return false }
        return true
    }

    private func print(_ call: VideoCall, _ event: VideoCallEvent) {
        if json {
            var fields: [String: any Sendable] = ["t": (elapsed * 1000).rounded() / 1000, "rtcId": call.rtcId, "event": event.type.rawValue]
            if let detail = event.detail, event.type != .SentOffer, event.type != .GotOffer { fields["detail"] = detail }
            if !event.data.isEmpty { fields["data"] = event.data }
            if let info = event.objData as? QueueInfo {
                fields["queue"] = ["state": info.state, "position": info.position ?? NSNull(), "ewtSeconds": info.ewtSeconds ?? NSNull()] as [String: any Sendable]
            }
            NDJSON.emit(fields)
            return
        }
        let time = String(format: "%6.2fs", elapsed)
        switch event.type {
        case .QueueInfoUpdated:
            // Every queue-info poll raises the event (its raw state too); only a waiting call has a place to show.
            guard let info = event.objData as? QueueInfo, info.state == "wait" else { return }
            let position = info.displayPosition.map { "position \($0)" } ?? "position unknown"
            let wait = info.ewtMinutes.map { ", about \($0) min" } ?? ""
            say("\(time)  waiting in the queue: \(position)\(wait)")
        case .GotOffer, .SentOffer, .GotAnswer, .SentAnswer, .ConnectionTimeoutStart, .ConnectionTimeoutEnd, .None:
            return
        case .TextChannelMessage where Self.isCommand(event.detail ?? ""):
            return // a command: its own event (StartHold, FlashOn, …) says it, when it applies to this call
        case .Error:
            say("\(time)  ERROR \(event.data["name"] ?? ""): \(event.detail ?? "")")
        default:
            say("\(time)  \(event.type.rawValue)" + (event.detail.map { $0.isEmpty ? "" : ": \($0)" } ?? "")
                + (event.data.isEmpty ? "" : "  \(event.data.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " "))"))
        }
    }

    /// Returns once the leg's last event (CallEnded, or TransferCompleted for a transferred leg) is
    /// printed, at most `limit` later: the SDK runs its handlers on a context of their own, so the
    /// watcher that saw the end can be ahead of this printer, and the process must not exit before
    /// the line a script waits for.
    func waitUntilEndPrinted(_ rtcId: String, limit: Duration = .seconds(2)) async {
        let deadline = ContinuousClock.now + limit
        while !ended.value.contains(rtcId), ContinuousClock.now < deadline {
            // Cancelled: the loop's deadline still bounds it.
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// One line per second while connected: bitrates, RTT, loss.
    func statsLine(_ stats: PeerStats, since earlier: PeerStats?, call rtcId: String) {
        ended.withLock { ended in if !ended.contains(rtcId) { print(stats, since: earlier) } }
    }

    private func print(_ stats: PeerStats, since earlier: PeerStats?) {
        let rates = earlier.map { stats.bitrates(since: $0) }
        func kbps(_ value: Double?) -> String { value.map { "\(Int($0 / 1000)) kbit/s" } ?? "—" }
        let rtt = stats.roundTripTime.map { String(format: "%.1f ms", $0 * 1000) } ?? "—"
        let lost = stats.inbound.compactMap(\.packetsLost).reduce(0, +)
        if json {
            NDJSON.emit(["t": (elapsed * 1000).rounded() / 1000, "event": "Stats", "sentVideoBps": rates?.sent[.video] ?? 0,
                         "sentAudioBps": rates?.sent[.audio] ?? 0, "receivedVideoBps": rates?.received[.video] ?? 0,
                         "receivedAudioBps": rates?.received[.audio] ?? 0, "rttSeconds": stats.roundTripTime ?? -1, "packetsLost": lost,
                         "videoCodec": stats.negotiated[.video]?.description ?? "", "audioCodec": stats.negotiated[.audio]?.description ?? "",
                         "localCandidateType": stats.candidatePair?.localType ?? "", "remoteCandidateType": stats.candidatePair?.remoteType ?? ""])
        } else {
            say(String(format: "%6.2fs  ", elapsed) + "↑ video \(kbps(rates?.sent[.video])) audio \(kbps(rates?.sent[.audio]))  "
                + "↓ video \(kbps(rates?.received[.video])) audio \(kbps(rates?.received[.audio]))  rtt \(rtt)  lost \(lost)"
                + "  " + [MediaKind.video, .audio].compactMap { stats.negotiated[$0]?.description }.joined(separator: " "))
        }
    }
}
