import GStreamer
import MediaPipeline
import MediaTestSupport
import Synchronization
import Testing
@testable import WebRTC

/// The first packet a call resends opens the far end's retransmission stream, a new SSRC, and
/// rtpsession holds a new SSRC's first packet until a second one in sequence comes (`probation`)
/// unless it is told not to. Held, the resent packet reached the jitter buffer with the next
/// resend, 40 ms later and usually past its frame's deadline: one 0.23 s freeze in every call
/// that met loss. Here one video packet is taken away before the answerer's RTP session, and the
/// resent copy must reach the jitter buffer as it arrives, the only packet of a new stream so far.
@Suite(.serialized) struct FirstResendTests {
    @Test func theFirstResentPacketReachesTheJitterBufferAsItArrives() async throws {
        let pair = PeerPair(offerer: testMedia(), answerer: testMedia())
        let atAnswerer = RemoteMedia(pair.answerer)
        try await pair.start()
        try await waitFor(.connected, on: pair.answerer)
        try await eventually(.seconds(10), "frames at the answerer") { atAnswerer.video.count > 30 }

        let session = try #require(await pair.answerer.session)
        let rtpSession = try #require(session.receivePath.sessions.first)
        let input = try #require(rtpSession.staticPad("recv_rtp_sink"))
        let watch = ResendWatch()
        var probes = [input.addBufferProbe(readingData: true) { _, bytes in watch.atSession(RTPHeader(bytes)) }]
        for buffer in session.receivePath.jitterBuffers {
            let pad = try #require(buffer.staticPad("sink"))
            probes.append(pad.addBufferProbe(readingData: true) { _, bytes in
                watch.atJitterBuffer(RTPHeader(bytes))
                return .pass
            })
        }
        defer { for probe in probes { probe.cancel() } }

        try await eventually(.seconds(5), "the dropped video packet resent into the jitter buffer") { watch.arrival != nil }
        let arrival = try #require(watch.arrival)
        #expect(arrival.newStreamPackets == 1,
                "packets of new streams at the RTP session when the resent packet #\(arrival.sequence) reached the jitter buffer: \(arrival.newStreamPackets)")
        await pair.close()
    }
}

/// The fields of an RTP header a test needs.
private struct RTPHeader {
    var payloadType: Int
    var sequence: UInt16
    var ssrc: UInt32

    init?(_ bytes: UnsafeRawBufferPointer?) {
        guard let bytes, bytes.count >= 12, bytes[0] >> 6 == 2 else { return nil }
        payloadType = Int(bytes[1] & 0x7f)
        sequence = UInt16(bytes[2]) << 8 | UInt16(bytes[3])
        ssrc = bytes[8..<12].reduce(0) { $0 << 8 | UInt32($1) }
    }
}

/// Drops one video packet at the RTP session's input once the call's streams are known, then
/// counts the packets of streams that were not (the resends) until the dropped packet reaches a
/// jitter buffer.
private final class ResendWatch: Sendable {
    struct Arrival {
        var sequence: UInt16
        var newStreamPackets: Int
    }

    private struct State {
        var seen = 0
        var known: Set<UInt32> = []
        var dropped: UInt16?
        var newStreamPackets = 0
        var arrival: Arrival?
    }

    /// Packets looked at before the drop: at 30 video and 50 audio packets a second, both streams.
    private static let warmUp = 60
    private let state = Mutex(State())

    var arrival: Arrival? { state.withLock { $0.arrival } }

    func atSession(_ packet: RTPHeader?) -> ProbeDecision {
        guard let packet else { return .pass }
        return state.withLock { state in
            guard state.dropped == nil else {
                if !state.known.contains(packet.ssrc) { state.newStreamPackets += 1 }
                return .pass
            }
            state.known.insert(packet.ssrc)
            state.seen += 1
            guard state.seen > Self.warmUp, packet.payloadType == VideoCodec.payloadType else { return .pass }
            state.dropped = packet.sequence
            return .drop
        }
    }

    func atJitterBuffer(_ packet: RTPHeader?) {
        guard let packet, packet.payloadType == VideoCodec.payloadType else { return }
        state.withLock { state in
            guard state.arrival == nil, let dropped = state.dropped, packet.sequence == dropped else { return }
            state.arrival = Arrival(sequence: dropped, newStreamPackets: state.newStreamPackets)
        }
    }
}
