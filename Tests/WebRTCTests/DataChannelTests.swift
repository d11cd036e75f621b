import GLibCore
import GStreamer
import MediaPipeline
import MediaTestSupport
import Testing
@testable import WebRTC

@Suite(.serialized) struct DataChannelTests {
    private func collect(_ handle: DataChannelHandle, count: Int) -> Task<[String], Never> {
        let events = handle.events()
        return Task {
            var texts: [String] = []
            for await event in events {
                if case .text(let text) = event { texts.append(text) }
                if texts.count == count { break }
            }
            return texts
        }
    }

    private func channels(_ pair: PeerPair, config: DataChannelConfig) async throws -> (DataChannelHandle, DataChannelHandle) {
        let offerSide = await pair.offerer.openDataChannel(config)
        let answerSide = await pair.answerer.openDataChannel(config)
        return (offerSide, answerSide)
    }

    @Test func defaultChannelCarriesMessagesBothWaysInOrder() async throws {
        let media = testMedia(videoEnabled: false)
        let pair = PeerPair(offerer: media, answerer: media)
        let config = DataChannelConfig.defaultTextChannel
        try await pair.start(dataChannels: [config])
        let (offerSide, answerSide) = try await channels(pair, config: config)
        let atAnswerer = collect(answerSide, count: 3), atOfferer = collect(offerSide, count: 2)
        // Sent before the channel is open: queued and delivered in order once it opens.
        #expect(!offerSide.isOpen)
        try offerSide.send("HOLD|rtc-1")
        try offerSide.send("PICKUP|rtc-1")
        try await eventually(.seconds(15), "channel open on both sides") { offerSide.isOpen && answerSide.isOpen }
        try offerSide.send("FLASH_ON")
        try answerSide.send("STATUS|AUDIO|MUTED|rtc-1")
        try answerSide.send("STATUS|AUDIO|UNMUTED|rtc-1")
        #expect(try await value(of: atAnswerer, within: .seconds(10), "three texts at the answerer") == ["HOLD|rtc-1", "PICKUP|rtc-1", "FLASH_ON"])
        #expect(try await value(of: atOfferer, within: .seconds(10), "two texts at the offerer") == ["STATUS|AUDIO|MUTED|rtc-1", "STATUS|AUDIO|UNMUTED|rtc-1"])
        #expect(offerSide.ordered)
        await pair.close()
        #expect(throws: DataChannelError.closed(label: config.label)) { try offerSide.send("late") }
    }

    @Test func negotiatedChannelWithIDWorksBothWays() async throws {
        let media = testMedia(videoEnabled: false)
        let pair = PeerPair(offerer: media, answerer: media)
        let config = DataChannelConfig(enabled: true, label: "commands", id: 7, negotiated: true, protocol: "ecv")
        try await pair.start(dataChannels: [config])
        let (offerSide, answerSide) = try await channels(pair, config: config)
        try await eventually(.seconds(15), "negotiated channel open") { offerSide.isOpen && answerSide.isOpen }
        #expect(offerSide.id == 7 && answerSide.id == 7)
        let atAnswerer = collect(answerSide, count: 1), atOfferer = collect(offerSide, count: 1)
        try offerSide.send("ping")
        try answerSide.send("pong")
        #expect(try await value(of: atAnswerer, within: .seconds(10), "ping") == ["ping"])
        #expect(try await value(of: atOfferer, within: .seconds(10), "pong") == ["pong"])
        await pair.close()
    }

    @Test func thousandMessagesArriveWithoutLossInOrder() async throws {
        let media = testMedia(videoEnabled: false)
        let pair = PeerPair(offerer: media, answerer: media)
        let config = DataChannelConfig(enabled: true, label: "bulk")
        try await pair.start(dataChannels: [config])
        let (offerSide, answerSide) = try await channels(pair, config: config)
        try await eventually(.seconds(15), "channel open") { offerSide.isOpen && answerSide.isOpen }
        let received = collect(answerSide, count: 1000)
        for index in 0..<1000 { try offerSide.send("message-\(index)") }
        let texts = try await value(of: received, within: .seconds(30), "1000 messages")
        #expect(texts == (0..<1000).map { "message-\($0)" })
        await pair.close()
    }

    @Test func binaryMessagesAndRemoteOpenedChannels() async throws {
        let media = testMedia(videoEnabled: false)
        let pair = PeerPair(offerer: media, answerer: media)
        let remoteChannels = Locked<[DataChannelHandle]>([])
        // Subscribed before anything starts, so no announcement can come first.
        let announcements = pair.answerer.events()
        let watcher = Task {
            for await case .remoteDataChannel(let handle) in announcements { remoteChannels.withLock { $0.append(handle) } }
        }
        try await pair.start(dataChannels: [DataChannelConfig(enabled: true, label: "files")])
        try await eventually(.seconds(15), "remote channel announced") { !remoteChannels.value.isEmpty }
        let remote = try #require(remoteChannels.value.first)
        #expect(remote.label == "files")
        let remoteEvents = remote.events()
        let bytes = Task { () -> [UInt8] in
            for await case .binary(let data) in remoteEvents { return data }
            return []
        }
        let local = await pair.offerer.openDataChannel(DataChannelConfig(enabled: true, label: "files"))
        do {
            try await eventually(.seconds(10), "open at both ends") { local.isOpen && remote.isOpen }
            try local.send(data: [0, 1, 2, 255])
            #expect(try await value(of: bytes, within: .seconds(10), "the binary message") == [0, 1, 2, 255])
        } catch {
            // A failure must not leave a running call behind for the suites after this one.
            watcher.cancel()
            await pair.close()
            throw error
        }
        watcher.cancel()
        await pair.close()
    }

    /// A remote that opens the text channel under its own label (an agent desktop's, a browser's)
    /// still carries our configured channel: the first reliable channel is adopted, with an event
    /// naming both labels; an unreliable one is not.
    @Test func aReliableChannelUnderAnotherLabelIsAdoptedAsTheConfiguredOne() async throws {
        let media = testMedia(videoEnabled: false)
        let pair = PeerPair(offerer: media, answerer: media)
        let adoptions = Locked<[(String, String)]>([])
        let answererEvents = pair.answerer.events()
        let watcher = Task {
            for await case .adoptedDataChannel(let remoteLabel, let configuredLabel) in answererEvents {
                adoptions.withLock { $0.append((remoteLabel, configuredLabel)) }
            }
        }
        let configured = DataChannelConfig(enabled: true, label: "textchannel")
        try await pair.answerer.start(dataChannels: [configured])
        let ours = await pair.answerer.openDataChannel(configured)
        let lossy = DataChannelConfig(enabled: true, label: "telemetry", ordered: false, maxRetransmits: 0)
        let theirs = DataChannelConfig(enabled: true, label: "text")
        try await pair.offerer.start(dataChannels: [lossy, theirs])
        let remote = await pair.offerer.openDataChannel(theirs)
        try await eventually(.seconds(15), "the adopted channel open on both sides") { ours.isOpen && remote.isOpen }
        // The event comes through the peer's order of operations, the open state straight from the channel.
        try await eventually(.seconds(5), "the adoption reported") { !adoptions.value.isEmpty }
        #expect(adoptions.value.map { "\($0.0)→\($0.1)" } == ["text→textchannel"])
        #expect(ours.boundLabel == "text")
        let atOurs = collect(ours, count: 1), atTheirs = collect(remote, count: 1)
        try remote.send("HOLD|rtc-1")
        try ours.send("STATUS|AUDIO|MUTED|rtc-1")
        #expect(try await value(of: atOurs, within: .seconds(10), "their text") == ["HOLD|rtc-1"])
        #expect(try await value(of: atTheirs, within: .seconds(10), "our text") == ["STATUS|AUDIO|MUTED|rtc-1"])
        watcher.cancel()
        await pair.close()
    }
}
