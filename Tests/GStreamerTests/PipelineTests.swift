import GLibCore
import GStreamer
import Testing

@Suite struct PipelineTests {
    init() { _ = TestRuntime.ready }

    @Test func vp8EncodeReachesEndOfStreamWithEveryBuffer() async throws {
        let pipeline = try Pipeline(launch: "videotestsrc num-buffers=60 ! video/x-raw,width=320,height=240,framerate=30/1 ! vp8enc deadline=1 ! fakesink name=sink")
        let counter = Counter()
        let pad = try #require(pipeline.element(named: "sink")?.staticPad("sink"))
        let probe = pad.addBufferProbe { info, _ in
            if info.size > 0 { counter.increment() }
            return .pass
        }
        try await pipeline.play()
        try await pipeline.waitForEndOfStream(timeout: .seconds(30))
        probe.cancel()
        pipeline.stop()
        #expect(counter.count == 60)
    }

    /// Payloaders push buffer lists: the probe reports each packet of a list, not the list as one buffer.
    @Test func bufferProbeSeesEveryPacketOfABufferList() async throws {
        let pipeline = try Pipeline(launch: "videotestsrc num-buffers=30 pattern=snow ! video/x-raw,width=640,height=480,framerate=30/1 "
                                    + "! vp8enc deadline=1 keyframe-max-dist=1 ! rtpvp8pay mtu=1200 ! fakesink name=sink")
        let packets = Locked<[BufferInfo]>([])
        let pad = try #require(pipeline.element(named: "sink")?.staticPad("sink"))
        let probe = pad.addBufferProbe { info, bytes in
            #expect(bytes == nil)
            packets.withLock { $0.append(info) }
            return .pass
        }
        try await pipeline.play()
        try await pipeline.waitForEndOfStream(timeout: .seconds(30))
        probe.cancel()
        pipeline.stop()
        let seen = packets.value
        #expect(seen.allSatisfy { $0.size > 12 && $0.size <= 1200 }, "sizes \(Set(seen.map(\.size)).sorted().prefix(5))")
        #expect(Set(seen.compactMap(\.pts)).count == 30)
        #expect(seen.count > 60, "snow keyframes at 640×480 take several packets each")
    }

    @Test func badLaunchStringNamesTheElement() {
        #expect {
            _ = try Pipeline(launch: "videotestsrc ! nosuchelement42 ! fakesink")
        } throws: { error in
            guard case GStreamerError.parseFailed(_, let message) = error else { return false }
            return message.contains("nosuchelement42")
        }
    }

    @Test func unknownFactoryThrowsNamingIt() {
        #expect(throws: GStreamerError.elementNotFound(factory: "nosuchencoder")) {
            _ = try Element(factory: "nosuchencoder")
        }
    }

    @Test func stateChangeErrorSurfacesAsThrownError() async throws {
        let pipeline = try Pipeline(launch: "filesrc location=/nonexistent/ecv-missing.mkv ! fakesink")
        await #expect {
            try await pipeline.play(timeout: .seconds(5))
        } throws: { error in
            guard case GStreamerError.stateChangeFailed(_, let target, let reason) = error else { return false }
            return target == "PLAYING" && reason.contains("ecv-missing.mkv")
        }
        pipeline.stop()
    }

    @Test func busDeliversTypedMessagesInOrder() async throws {
        let pipeline = try Pipeline(launch: "audiotestsrc num-buffers=5 ! fakesink")
        let messages = pipeline.messages()
        try await pipeline.play()
        try await pipeline.waitForEndOfStream() // bounded; the stream below then holds the EOS
        var sawPlaying = false
        var sawEndOfStream = false
        for await message in messages {
            switch message {
            case .stateChanged(_, _, .playing, _, true): sawPlaying = true
            case .endOfStream: sawEndOfStream = true
            default: break
            }
            if sawEndOfStream { break }
        }
        pipeline.stop()
        #expect(sawPlaying)
        #expect(sawEndOfStream)
    }

    /// A pipeline's children change state and start streaming threads many times over in a
    /// call's set-up; those messages stay off the main loop (`BusDispatcher.reachesTheMainLoop`),
    /// and the pipeline's own state changes, errors and end-of-stream still come.
    @Test func childStateChangesAndThreadStatusStayOffTheBus() async throws {
        let pipeline = try Pipeline(launch: "audiotestsrc num-buffers=5 ! queue ! audioconvert ! queue ! fakesink")
        let messages = pipeline.messages(bufferingNewest: 256)
        try await pipeline.play()
        try await pipeline.waitForEndOfStream()
        var received: [BusMessage] = []
        for await message in messages {
            received.append(message)
            if case .endOfStream = message { break }
        }
        pipeline.stop()
        let stateChanges = received.compactMap { message -> Bool? in
            if case .stateChanged(_, _, _, _, let fromPipeline) = message { fromPipeline } else { nil }
        }
        #expect(stateChanges.count >= 3, "NULL→READY→PAUSED→PLAYING of the pipeline itself: \(received)")
        #expect(stateChanges.allSatisfy { $0 }, "a child's state change reached the bus: \(received)")
        #expect(!received.contains { if case .other("stream-status", _) = $0 { true } else { false } }, "\(received)")
        #expect(received.contains { if case .streamStart = $0 { true } else { false } })
    }

    @Test func builtPipelineLinksWithCapsFilter() async throws {
        let pipeline = Pipeline()
        let source = try Element(factory: "videotestsrc")
        try source.set("num-buffers", 10)
        let sink = try Element(factory: "fakesink")
        try pipeline.add([source, sink])
        try source.link(to: sink, filter: Caps("video/x-raw,width=160,height=120"))
        try await pipeline.play()
        try await pipeline.waitForEndOfStream()
        let caps = try #require(sink.staticPad("sink")?.currentCaps)
        #expect(caps.structures.first?.int("width") == 160)
        pipeline.stop()
        #expect(throws: GStreamerError.self) {
            try source.link(to: sink, filter: Caps("audio/x-raw"))
        }
    }

    @Test func elementFactoryReportsPresenceRankAndClass() throws {
        let vp8 = try #require(ElementFactory.find("vp8enc"))
        #expect(vp8.klass.contains("Encoder"))
        #expect(vp8.rank == 256, "vp8enc is a primary element")
        #expect(ElementFactory.find("fakesink")?.rank == 0, "fakesink has no rank")
        #expect(ElementFactory.find("nosuchencoder") == nil)
        let encoders = ElementFactory.all(klassContaining: ["Encoder", "Video"])
        #expect(encoders.contains { $0.name == "x264enc" })
    }

    @Test func capsAndStructuresRoundTrip() throws {
        let caps = try Caps("video/x-raw,format=I420,width=640,height=480,framerate=30/1")
        #expect(caps.isFixed)
        let structure = try #require(caps.structures.first)
        #expect(structure.name == "video/x-raw")
        #expect(structure.string("format") == "I420")
        #expect(structure.fraction("framerate")! == (30, 1))
        #expect(throws: GStreamerError.invalidCaps("not caps at all ((")) { _ = try Caps("not caps at all ((") }
        let built = Structure(name: "stats", fields: [("bytes", 12), ("kind", "video")])
        let reparsed = try Structure(parsing: built.description)
        #expect(reparsed.int("bytes") == 12)
        #expect(reparsed.string("kind") == "video")
    }
}
