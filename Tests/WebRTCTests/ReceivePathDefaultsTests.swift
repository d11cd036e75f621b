import Foundation
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
        let (pair, _, session) = try await flowingPair()
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

/// A packet that is slow to come, with nothing after it yet, is waited for, not given up: by
/// default rtpjitterbuffer predicts when the next packet is due, and a latency after that declares
/// it lost and drops it as too late when it comes. Chromium paces big frames out that slowly when
/// its estimate is low, and every frame broke. Here the answerer's RTP input stalls for 300 ms (three
/// jitter-buffer latencies) on one video packet; every packet must still reach the jitter buffers
/// in time.
@Suite(.serialized) struct SlowPacketTests {
    @Test func aPacketSlowToComeIsWaitedFor() async throws {
        let (pair, atAnswerer, session) = try await flowingPair()
        let input = try #require(session.receivePath.sessions.first?.staticPad("recv_rtp_sink"))
        let stalled = Counter()
        let stall = input.addBufferProbe(readingData: true) { _, bytes in
            guard stalled.count == 0, RTPHeader(bytes)?.payloadType == VideoCodec.payloadType else { return .pass }
            stalled.increment()
            // The path holds this packet and everything behind it, as a slow sender's pacing does.
            Thread.sleep(forTimeInterval: 0.3)
            return .remove
        }
        defer { stall.cancel() }
        try await eventually(.seconds(5), "the stall") { stalled.count == 1 }
        let afterStall = atAnswerer.video.count
        try await eventually(.seconds(5), "frames after the stall (\(afterStall))") { atAnswerer.video.count > afterStall + 30 }

        var counts: [(late: Int, lost: Int)] = []
        for buffer in session.receivePath.jitterBuffers {
            let stats = try #require(try buffer.get("stats").structureValue)
            counts.append((try #require(stats.int("num-late")), try #require(stats.int("num-lost"))))
        }
        #expect(!counts.isEmpty && counts.allSatisfy { $0.late == 0 && $0.lost == 0 }, "jitter buffers' late and lost packets: \(counts)")
        await pair.close()
    }
}
