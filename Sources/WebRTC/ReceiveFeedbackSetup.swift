import Foundation
import GLibCore
import GStreamer
import MediaPipeline

/// webrtcbin's RTP sessions (`rtpsession`): how often they report, and what the far end's
/// transport-wide feedback says. `LossResponse` moves the report settings while packets go missing.
final class RTPSessionSetup: SessionElementSetup {
    let factories = ["rtpsession"]
    private let initialMinInterval: UInt64
    private let sessions = Locked<[Element]>([])

    init(rtcpMinInterval: Duration) { initialMinInterval = UInt64(max(0, rtcpMinInterval.nanoseconds)) }

    /// The sessions as webrtcbin made them.
    var all: [Element] { sessions.value }

    func configure(_ element: Element) throws(GStreamerError) {
        // Reports are spaced by the RTCP allowance (`rtcp-fraction`, bits/s) and by
        // `rtcp-min-interval`; `LossResponse` moves both while packets go missing.
        try element.set(RTPSessionProperty.rtcpMinInterval, initialMinInterval)
        try element.set(RTPSessionProperty.rtcpFraction, LossResponse.calmRTCPBitsPerSecond)
        // rtpsession holds a new SSRC's first packet until a second one in sequence
        // comes (`probation`, 2), a guard against stray packets that SRTP already
        // gives. The first resent packet of a call opens the far end's RTX stream,
        // so it waited for the next resend, 40 ms on, usually past its frame's
        // deadline: one 0.23 s freeze in every call that met loss (5 %, measured).
        try element.set(RTPSessionProperty.probation, 0)
        sessions.withLock { $0.append(element) }
    }

    func release() { sessions.withLock { $0 = [] } }

    /// Sets the RTCP allowance and the floor under the report interval on every session.
    func setReporting(bitsPerSecond: Double, minInterval: Duration) throws(GStreamerError) {
        for session in sessions.value {
            try session.set(RTPSessionProperty.rtcpFraction, bitsPerSecond)
            try session.set(RTPSessionProperty.rtcpMinInterval, UInt64(max(0, minInterval.nanoseconds)))
        }
    }

    /// The floor under the report interval as it is set now; nil before webrtcbin made a session.
    var rtcpMinInterval: Duration? {
        guard let session = sessions.value.first,
              // rtpsession always has the property; a failed read is reported as "not known".
              let value = try? session.get(RTPSessionProperty.rtcpMinInterval) else { return nil }
        return .nanoseconds(Int64(value))
    }

    /// What the far end's transport-wide feedback says of the last 300 ms (rtpsession
    /// `twcc-stats`): nil until feedback arrived (the far end does not do TWCC, or not yet).
    var transportWideFeedback: TransportWideFeedback? {
        for session in sessions.value where session.hasProperty(RTPSessionProperty.twccStats.name) {
            // An rtpsession that has seen no feedback yet holds no structure: the next one may.
            guard let stats = try? session.get(RTPSessionProperty.twccStats),
                  let sent = stats.uint("packets-sent"), sent > 0 else { continue }
            return TransportWideFeedback(packetsSent: Int(sent), packetsReceived: Int(stats.uint("packets-recv") ?? 0),
                                         lossPercent: stats.double("packet-loss-pct") ?? 0,
                                         receivedBitsPerSecond: Int(stats.uint("bitrate-recv") ?? 0),
                                         sentBitsPerSecond: Int(stats.uint("bitrate-sent") ?? 0))
        }
        return nil
    }
}

/// The incoming streams' jitter buffers (`rtpjitterbuffer`): when a stream starts, whether it asks
/// for resends, and how long it waits for them (webrtcbin's own `latency` reaches only jitter
/// buffers made after it changed).
final class JitterBufferSetup: SessionElementSetup {
    let factories = ["rtpjitterbuffer"]
    private struct Buffers {
        var all: [Element] = []
        /// Buffers whose stream's kind is not known yet, so whether they ask for resends is not
        /// decided: see `askForResends(kinds:)`.
        var undecided: [Element] = []
    }
    private let buffers = Locked(Buffers())

    /// Consecutive packets after which a jitter buffer starts its stream without waiting out its
    /// latency (`faststart-min-packets`): a video key frame is many packets, audio two 20 ms
    /// frames; a stream that begins out of order still gets the latency.
    static let fastStartPackets: UInt = 2

    /// The jitter buffers as webrtcbin made them.
    var all: [Element] { buffers.value.all }

    func configure(_ element: Element) throws(GStreamerError) {
        // A jitter buffer holds a stream's first packet for its whole latency
        // before it pushes anything (in case earlier ones come late); that wait
        // was most of the time from connecting to the first picture. With a few
        // packets in sequence the stream has evidently begun in order, so it
        // starts then; later packets wait for gaps exactly as before.
        try element.set(JitterBufferProperty.fastStartMinPackets, Self.fastStartPackets)
        // Resends are asked for gaps only, as libwebrtc does: by default the buffer
        // also predicts when the next packet is due from the spacing so far, asks for
        // it when it is late and gives it up as lost a latency later, with nothing
        // after it missing. A sender that paces a big frame out slowly (Chromium at
        // ~80 kbit/s after a blackhole) then had every frame's later packets given
        // up before they came and dropped as too late: each frame broken, a key
        // frame asked for, bigger and slower still, for as long as the call lasted.
        try element.set(JitterBufferProperty.rtxNextSeqnum, false)
        // A gap is asked for as soon as a later packet shows it, as libwebrtc's NACK module does:
        // the automatic delay (twice the jitter, or half the packet spacing: 10–20 ms here) waits
        // for reordering that a WebRTC path rarely has, and at 20 % loss each try's wait adds up.
        try element.set(JitterBufferProperty.rtxDelay, 0)
        buffers.withLock {
            $0.all.append(element)
            $0.undecided.append(element)
        }
    }

    func release() { buffers.withLock { $0 = Buffers() } }

    /// Sets every buffer's wait for resent packets that differs from `latency`.
    func setLatency(_ latency: UInt) throws(GStreamerError) {
        for buffer in buffers.value.all where try buffer.get(JitterBufferProperty.latency) != latency {
            try buffer.set(JitterBufferProperty.latency, latency)
        }
    }

    /// Makes every incoming video stream's jitter buffer ask for resends (NACK) from the start,
    /// without waiting for the loss response, and every audio stream's not ask at all. webrtcbin
    /// 1.22 takes `do-retransmission` for all of them from the bundle's last m-line: from audio
    /// (no NACK) it left video without resends, and a far end that protects its video with FEC
    /// (Chromium's RED/ULPFEC) repairs the first losses so well that the loss count that wakes
    /// `LossResponse` may stay at zero while frames still go missing. Audio has no resends in
    /// WebRTC (Opus has its in-band FEC), so its requests only took RTCP's early slots from video:
    /// at 20 % loss the audio jitter buffer asked twice as often as the video one, and video
    /// requests waited for the next regular report or expired unsent (rtpsession's log). A jitter
    /// buffer's stream is its caps' SSRC, whose kind is in `kinds` (the SDP's and the pads'); one
    /// not known yet waits for the next call (every liveness tick).
    func askForResends(kinds: [UInt: MediaKind]) throws(GStreamerError) {
        let undecided = buffers.value.undecided
        guard !undecided.isEmpty else { return }
        var decided: [Element] = []
        for buffer in undecided {
            guard let ssrc = buffer.staticPad("sink")?.currentCaps?.structures.first?.uint("ssrc"), let kind = kinds[ssrc] else { continue }
            try buffer.set(JitterBufferProperty.doRetransmission, kind == .video)
            decided.append(buffer)
        }
        buffers.withLock { state in state.undecided.removeAll { buffer in decided.contains { $0 === buffer } } }
    }
}
