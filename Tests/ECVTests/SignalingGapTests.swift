import ECV
import ECVProtocol
import ECVService
import ECVTestSupport
import GLibCore
import Testing

/// The signaling layer alone: what one side sends while the collider sockets drop, reopen and
/// register again reaches the other side after the reconnection exactly once and in order
/// (docs/protocol.md §9): the sender's queue, the socket's unwritten texts and the collider's
/// queue for a client whose socket is closing, with nothing repeated.
@Suite(.serialized) struct SignalingGapTests {
    @Test func messagesSentDuringTheGapAreDeliveredOnceInOrder() async throws {
        let pair = try await RoomPair.start(room: "gap-room")
        defer { pair.close() }
        pair.first.send(candidate(1))
        try await eventually(.seconds(5), "the first candidate") { pair.received.count == 1 }

        #expect(pair.backend.service.script.dropRoomSockets(rtcId: "gap-room") == 2)
        // Sent at once, while the sockets are down or reopening: the sender keeps them.
        for n in 2...6 { pair.first.send(candidate(n)) }
        #expect(try await withDeadline(.seconds(10)) { await pair.firstReconnected.value })
        pair.first.send(candidate(7))
        try await pair.finish()
        #expect(pair.received.numbers == Array(1...7), "each once, in order")
        #expect(pair.first.lostMessages == 0)
        await pair.backend.close()
    }

    /// Candidates sent back to back while the drop happens: some go out on the old socket before
    /// it notices, some are refused by a socket already closing, some wait for the new one.
    @Test func aStreamOfCandidatesAcrossTheDropArrivesOnceInOrder() async throws {
        let pair = try await RoomPair.start(room: "gap-stream")
        defer { pair.close() }
        let count = 120
        let sender = Task {
            for n in 1...count {
                pair.first.send(candidate(n))
                // Paced so that the stream spans the drop and the reconnection.
                try? await Task.sleep(for: .milliseconds(3)) // cancelled: the test is over
            }
        }
        try await eventually(.seconds(5), "the stream under way") { pair.received.count >= 10 }
        #expect(pair.backend.service.script.dropRoomSockets(rtcId: "gap-stream") == 2)
        await sender.value
        #expect(try await withDeadline(.seconds(10)) { await pair.firstReconnected.value })
        try await pair.finish()
        #expect(pair.received.numbers == Array(1...count), "each once, in order")
        #expect(pair.first.lostMessages == 0)
        await pair.backend.close()
    }

    /// The drop repeated under one stream, each time at another point of it, so that the narrow
    /// windows a single drop seldom meets are met many times per run: a send refused by a socket
    /// that just began closing, a delivery the collider makes to a socket another thread is
    /// closing, texts the old socket still holds when the new one registers.
    @Test func aStreamAcrossRepeatedDropsArrivesOnceInOrder() async throws {
        let room = "gap-repeated"
        let pair = try await RoomPair.start(room: room)
        defer { pair.close() }
        let registrations = pair.backend.service.log.subscribe()
        let stop = Locked(false)
        let sender = Task { () -> Int in
            var sent = 0
            while !stop.value {
                sent += 1
                pair.first.send(candidate(sent))
                // Paced so that every gap holds a few messages and none holds the 256 either side keeps.
                try? await Task.sleep(for: .milliseconds(1)) // cancelled: the test is over
            }
            return sent
        }
        let drops = 25
        for drop in 1...drops {
            // Each drop lands 0–3 ms after both sides registered again, so each meets the stream elsewhere.
            try? await Task.sleep(for: .microseconds(Int.random(in: 0...3_000))) // cancelled: the test is over
            #expect(pair.backend.service.script.dropRoomSockets(rtcId: room) == 2, "drop \(drop)")
            let registered = try await withDeadline(.seconds(10)) { () async -> Int in
                var seen = 0
                for await entry in registrations where entry.rtcId == room && entry.message.contains("registered in room") {
                    seen += 1
                    if seen == 2 { break }
                }
                return seen
            }
            #expect(registered == 2, "both sides registered again after drop \(drop)")
        }
        stop.withLock { $0 = true }
        let count = await sender.value
        try await pair.finish()
        #expect(pair.received.numbers == Array(1...count), "each of \(count) once, in order, across \(drops) drops")
        #expect(pair.first.lostMessages == 0)
        await pair.backend.close()
    }
}

private func candidateText(_ n: Int) -> String { "candidate:\(n) 1 udp 1 127.0.0.1 \(9000 + n) typ host" }

private func candidate(_ n: Int) -> ECVProtocol.SignalingMessage {
    .candidate(ICECandidate(sdpMLineIndex: 0, sdpMid: "0", candidate: candidateText(n)))
}

/// Two participants of one room on the reference service, the second recording what it receives.
private struct RoomPair: Sendable {
    final class Received: Sendable {
        private let log = Locked<[String]>([])
        private let bye = Locked(false)
        /// The number of each candidate received, in arrival order.
        var numbers: [Int] { log.value.map { Int($0.dropFirst("candidate:".count).prefix { $0 != " " }) ?? -1 } }
        var count: Int { log.value.count }
        var sawBye: Bool { bye.value }
        func record(_ text: String) { log.withLock { $0.append(text) } }
        func recordBye() { bye.withLock { $0 = true } }
    }

    let backend: Backend
    let first: RoomSignaling
    let second: RoomSignaling
    let received = Received()
    let firstReconnected: Task<Bool, Never>
    let reader: Task<Void, Never>

    static func start(room: String) async throws -> RoomPair {
        let backend = try await Backend.start { $0.issuesCallerTokens = false }
        let options = RoomSignaling.Options(webrtcUrl: backend.url)
        let pair = try RoomPair(backend: backend, first: RoomSignaling(room: room, options: options),
                                second: RoomSignaling(room: room, options: options))
        for side in [pair.first, pair.second] {
            _ = try await side.join()
            try await side.openSocket()
            try side.register()
        }
        try await eventually(.seconds(5), "both registered") {
            backend.service.log.entries(rtcId: room).filter { $0.message.contains("registered in room") }.count == 2
        }
        return pair
    }

    private init(backend: Backend, first: RoomSignaling, second: RoomSignaling) {
        self.backend = backend
        self.first = first
        self.second = second
        let secondEvents = second.events(), firstEvents = first.events()
        let received = received
        reader = Task {
            for await event in secondEvents {
                switch event {
                case .message(.candidate(let candidate)): received.record(candidate.candidate)
                case .message(.bye): received.recordBye()
                default: break
                }
            }
        }
        firstReconnected = Task {
            for await event in firstEvents { if case .reconnected = event { return true } }
            return false
        }
    }

    /// Sends `bye` behind everything else: once it arrived, anything sent twice would have too.
    func finish() async throws {
        first.send(.bye)
        do { try await eventually(.seconds(10), "the bye behind the candidates") { received.sawBye } } catch {
            Issue.record("received \(received.numbers)")
            throw error
        }
    }

    func close() {
        first.close()
        second.close()
        reader.cancel()
        firstReconnected.cancel()
    }
}
