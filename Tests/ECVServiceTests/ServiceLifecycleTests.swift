import ECVProtocol
import ECVService
import Foundation
import MediaTestSupport
import Soup
import Synchronization
import Testing

extension ServiceTests {
    @Suite("Service lifecycle, timers and hooks") struct LifecycleTests {
        @Test func offerTimeoutsFireOnTheMainLoopTimer() async throws {
            let test = try await TestService.start()
            // Changed at run time, as scripted scenarios do.
            try test.service.reconfigureACD { $0.offerTimeout = 0.2 }
            let agent = try await test.agent("Alice")
            let call = try await test.dial()
            #expect(try await agent.nextOffer().timeoutSeconds == 0.2)
            #expect(try await agent.nextState().state == .ringing)
            // Nobody answers: withdrawn by the timer, the agent set not ready (RONA).
            #expect(try await agent.next() == .offerWithdrawn(rtcId: call, reason: .timeout))
            #expect(try await agent.nextState() == AgentStateUpdate(agentId: agent.id, state: .notReady, queues: ["default"],
                                                                   reason: "NO_ANSWER"))
            #expect(try await test.poll(call) == QueueInfoResponse(rtcId: call, state: .wait, position: 1, ewtSeconds: -1))
            await test.stop()
        }

        @Test func aManualClockDrivesRetention() async throws {
            let clock = ManualACDClock()
            let test = try await TestService.start { $0.clock = .manual(clock) }
            let call = try await test.dial()
            let undialed = try await test.rtcId()
            #expect(try await test.hangup(call).status == 200)
            clock.advance(by: 59)
            test.service.tick()
            #expect(try await test.poll(call).state == .ended)
            clock.advance(by: 2)
            test.service.tick()
            #expect(try await test.poll(call).state == .notFound)
            #expect(try await test.hangup(call).status == 404, "forgotten after 60 s")
            clock.advance(by: 600)
            test.service.tick()
            let late = try await test.post(ECVAPI.dialEx, json: DialExRequest(rtcId: undialed, callerName: "J"))
            #expect(try test.error(late, status: 404).code == .unknownRtcId, "an issued id expires after 600 s")
            #expect(test.service.acd.snapshot().isEmpty)
            await test.stop()
        }

        @Test func aManualClockDrivesOfferAndTransferTimeouts() async throws {
            let clock = ManualACDClock()
            let test = try await TestService.start { $0.clock = .manual(clock) }
            let alice = try await test.agent("Alice")
            let bob = try await test.agent("Bob")
            let call = try await test.dial()
            let caller = try await test.queueSocket(call)
            _ = try await caller.next(QueueSocketMessage.self)
            #expect(try await alice.nextOffer().rtcId == call)
            _ = try await alice.nextState()
            clock.advance(by: 15)
            test.service.tick()
            #expect(try await alice.next() == .offerWithdrawn(rtcId: call, reason: .timeout))
            #expect(try await alice.nextState().reason == "NO_ANSWER")
            #expect(try await bob.nextOffer().rtcId == call, "re-routed to the next ready agent")
            _ = try await bob.nextState()
            #expect(try await bob.request(.accept(rtcId: call), id: "a") == .ack(requestId: "a"))
            #expect(try await caller.next(QueueSocketMessage.self).kind == .agentConnected)
            _ = try await bob.next()
            _ = try await bob.nextState()
            #expect(try await alice.request(.ready(queues: []), id: "r") == .ack(requestId: "r"))
            _ = try await alice.nextState()
            #expect(try await bob.request(.transfer(rtcId: call, target: .agent(alice.id)), id: "t") == .ack(requestId: "t"))
            #expect(try await caller.next(QueueSocketMessage.self) == .transferPending(rtcId: call, target: .agent(alice.id)))
            let transferOffer = try await alice.nextOffer()
            _ = try await alice.nextState()
            clock.advance(by: 15)
            test.service.tick()
            #expect(try await caller.next(QueueSocketMessage.self) == .transferCancelled(rtcId: call, reason: .timeout))
            #expect(try await alice.next() == .offerWithdrawn(rtcId: transferOffer.rtcId, reason: .timeout))
            #expect(try await test.poll(call).state == .agentConnected, "the call goes on with Bob")
            await test.stop()
        }

        @Test func delayedAnswersLetOthersOvertake() async throws {
            let test = try await TestService.start()
            let log = test.service.log.subscribe()
            test.service.script.delay(.getRtcId, by: .seconds(3), times: 1)
            let delayed = Task { try await test.rtcId() }
            try await waitFor(log, "the delay to start") { $0.hasPrefix("answer of getRtcId held") }
            #expect(try await test.rtcId() == "rtc-1", "the undelayed request overtakes the held one")
            #expect(try await delayed.value == "rtc-2")
            await test.stop()
        }

        @Test func theEventLogRecordsWhatTheServiceDid() async throws {
            let test = try await TestService.start()
            let call = try await test.dial()
            let socket = try await test.queueSocket(call)
            _ = try await socket.next(QueueSocketMessage.self)
            #expect(try await test.hangup(call).status == 200)
            _ = try await socket.next(QueueSocketMessage.self)
            let messages = test.service.log.entries(rtcId: call).map(\.message)
            #expect(messages.first == "GetRtcId → \(call)")
            #expect(messages.contains("DialEx \(call) → 200 ix-1, queue default, priority 0"))
            #expect(messages.contains("queue socket of \(call) greeted: waiting"))
            #expect(messages.contains("\(call) ← call_ended"))
            let sequences = test.service.log.entries.map(\.sequence)
            #expect(sequences == sequences.sorted() && Set(sequences).count == sequences.count)
            await test.stop()
        }

        @Test func configurationAndStartErrorsAreThrown() async throws {
            #expect(throws: ACDError.invalidConfiguration("offerTimeout must be > 0")) {
                _ = try ReferenceService(configuration: ReferenceServiceConfiguration(acd: ACDConfiguration(offerTimeout: 0)))
            }
            #expect(throws: ACDError.self) {
                _ = try ReferenceService(configuration: ReferenceServiceConfiguration(advertisedBaseURL: "ftp://x"))
            }
            let test = try await TestService.start()
            await #expect(throws: ReferenceServiceError.alreadyStarted) { try await test.service.start() }
            let port = try #require(test.service.baseURL?.port)
            let clash = try ReferenceService()
            await #expect(throws: ReferenceServiceError.self) { try await clash.start(port: UInt16(port)) }
            await test.stop()
            await test.stop() // idempotent
        }

        @Test func runForeverServesUntilCancelledAndAnnouncesItsURLs() async throws {
            let banners = AsyncStream<String>.makeStream()
            let configuration = ReferenceServiceConfiguration(acd: ACDConfiguration(queues: ["default", "Billing"]))
            let server = Task {
                try await ReferenceService.runForever(configuration: configuration, host: "127.0.0.1", port: 0) { banner in
                    banners.continuation.yield(banner)
                }
            }
            let banner = try await within(10, "the banner") {
                for await banner in banners.stream { return banner }
                return ""
            }
            let line = try #require(banner.split(separator: "\n").first { $0.contains("serviceUrl") })
            let base = try #require(line.split(separator: " ").last.map(String.init))
            #expect(base.hasPrefix("http://127.0.0.1:"))
            for expected in ["\(ECVAPI.webSocketBase(base))/ws", "\(base)/r/<rtcId>", "\(base)/api/GetRtcId, /api/DialEx",
                             "\(ECVAPI.webSocketBase(base))/api/QueueSocket?rtcId=", "default (default), Billing",
                             "listening on loopback only", "none admitted: no secret configured", "caller tokens required"] {
                #expect(banner.contains(expected), "the banner lacks \(expected):\n\(banner)")
            }
            let queues = try await HTTPClient().get(base + ECVAPI.queues)
            #expect(queues.status == 200)
            // Nobody configured a secret or opened the service to agents: no agent gets in.
            let login = try await HTTPClient().send(HTTPRequest(method: "POST", url: base + ECVAPI.agentLogin,
                                                                body: Array(#"{"name":"Mallory"}"#.utf8)))
            #expect(login.status == 401)
            server.cancel()
            try await server.value
            let refused = try? await HTTPClient(connectTimeout: .seconds(2)).get(base + ECVAPI.queues)
            #expect(refused == nil, "the port is closed after cancellation")
        }

        /// A whole life: REST, queue socket, agent socket, a room with two collider sockets, stop.
        private func oneLife() async throws {
            let test = try await TestService.start()
            let agent = try await test.agent("Alice")
            let call = try await test.dial()
            let socket = try await test.queueSocket(call)
            _ = try await socket.next(QueueSocketMessage.self)
            _ = try await agent.nextOffer()
            _ = try await agent.nextState()
            _ = try await agent.request(.accept(rtcId: call), id: "a")
            let callerToken = test.callerToken(call)
            let first = try #require(try await test.join(call, credential: callerToken).params)
            let second = try #require(try await test.join(call, credential: agent.token).params)
            let colliders = [try await SocketProbe.connect(first.wssUrl, headers: TestService.credentialHeaders(callerToken)),
                             try await SocketProbe.connect(second.wssUrl, headers: TestService.credentialHeaders(agent.token))]
            try colliders[0].send(ColliderCommand.register(roomId: call, clientId: first.clientId))
            try colliders[1].send(ColliderCommand.register(roomId: call, clientId: second.clientId))
            try colliders[1].send(ColliderCommand.send(.bye))
            _ = try await colliders[0].next(ColliderDelivery.self)
            await test.stop()
            #expect(test.service.openSocketCount == 0)
        }

        private func settle(_ read: () -> Int, to limit: Int) async throws -> Int {
            var value = read()
            for _ in 0..<100 where value > limit {
                try await Task.sleep(for: .milliseconds(50))
                value = read()
            }
            return value
        }

        @Test func stoppingReturnsThreadsAndDescriptorsToBaseline() async throws {
            for _ in 0..<3 { try await oneLife() } // warm up GLib, libsoup and the cooperative pool
            try await Task.sleep(for: .milliseconds(200))
            let descriptors = openFileDescriptorCount()
            let threads = threadCount()
            #expect(descriptors > 0 && threads > 0)
            for _ in 0..<20 { try await oneLife() }
            let descriptorsAfter = try await settle(openFileDescriptorCount, to: descriptors + 6)
            let threadsAfter = try await settle(threadCount, to: threads + 4)
            // One leaked descriptor per life would show as +20 or more (each life opens about 12 sockets).
            #expect(descriptorsAfter <= descriptors + 6, "fds \(descriptors) → \(descriptorsAfter)")
            #expect(threadsAfter <= threads + 4, "threads \(threads) → \(threadsAfter)")
            print("service leak check: fds \(descriptors) → \(descriptorsAfter), threads \(threads) → \(threadsAfter)")
        }
    }
}
