import ECVPeer
import ECVService
import ECVTestSupport
import Foundation
import Testing

/// PeerJS clients as they really behave against our server and an ECVKit `Peer` (issue #38):
/// the PyPI port peerjs 1.5.1 (a typeless ping first, JSON in text frames, closes by closing its
/// RTCPeerConnection) and the service's page behaving as the PeerJS library does (it closes a
/// connection by closing its RTCPeerConnection, chunks BinaryPack messages, sends JSON in the
/// frames of PeerJS 1.5 or of ≤ 1.4).
@Suite(.serialized) struct PeerJSClientInteropTests {
    static var hasPeerJS151: Bool { InteropEnvironment.hasVenvPackage("peerjs/peer.py") }
    static let missing151 = "peerjs 1.5.1 is not in the interop venv: run `make test-deps` (Tests/Interop/requirements-nodeps.txt)"

    /// Items 1, 2 (and 5's text frames): peerjs 1.5.1's first frame `{"ping":"once"}` closed its
    /// socket 1 ms after OPEN; its close (RTCPeerConnection.close()) went unnoticed for 151 s.
    @Test(.enabled(if: hasPeerJS151, Comment(rawValue: missing151)))
    func peerjs151StaysConnectedTalksJSONAndItsCloseIsSeenAtOnce() async throws {
        let (service, url) = try await PeerInteropTests.backend()
        let python = try PythonPeer(script: "peerjs151_peer.py", arguments: ["--port", "\(url.port ?? 0)", "--key", "demo", "--id", "py151", "--timeout", "40"])
        try await eventually(.seconds(40), "peerjs 1.5.1 registered") { service.peerServer?.registeredPeers(key: "demo").contains("py151") == true }
        try await Task.sleep(for: .milliseconds(300))
        #expect(service.peerServer?.registeredPeers(key: "demo").contains("py151") == true, "its typeless ping kept the socket")
        let swift = Peer(id: "swift-json", options: PeerInteropTests.options(url))
        try await Events(swift.events()).first("OPEN") { if case .open = $0 { true } else { false } }
        let data = swift.connect(peerId: "py151", options: ConnectOption(serialization: .json))
        let events = Events(data.events())
        try await events.first("data open", timeout: .seconds(30)) { $0 == .open }
        try data.send("hello")
        try await events.first("the port's echo (a text frame)") { $0 == .data(.text("echo: hello")) }
        try data.send("second")
        try await events.first("the second echo") { $0 == .data(.text("echo: second")) }
        let asked = ContinuousClock.now
        try data.send("hang up")
        try await events.first("CLOSE after the port closed its RTCPeerConnection", timeout: .seconds(5)) { $0 == .close }
        let seen = ContinuousClock.now - asked
        let summary = try await python.summary(timeout: .seconds(20))
        print("peerjs 1.5.1: its close seen \(seen) after asking for it; \(summary.raw)")
        #expect(summary.strings("closed") == ["local"], "the port closed it: \(summary.raw)")
        #expect(seen < .seconds(1), "CLOSE \(seen) after the port's close")
        await swift.destroy()
        await service.stop()
    }

    /// The port calls an ECVKit peer (`Peer.connect`, JSON; its offering side needs the harness's
    /// shims), and ECVKit's close reaches the port as PeerJS's in-band notice, after everything
    /// ECVKit sent. The port's own close event (it ignores the notice, where PeerJS 1.5 closes on
    /// it) waits for the channel's close, which webrtcbin 1.22's stream reset does not always
    /// deliver (docs/protocol.md §8.7): printed, not required. (No call: the port has no MediaConnection.)
    @Test(.enabled(if: hasPeerJS151, Comment(rawValue: missing151)))
    func peerjs151ConnectsToAnECVKitPeerAndSeesItsClose() async throws {
        let (service, url) = try await PeerInteropTests.backend()
        let swift = Peer(id: "swift-151", options: PeerInteropTests.options(url))
        let events = Events(swift.events())
        try await events.first("OPEN") { if case .open = $0 { true } else { false } }
        let python = try PythonPeer(script: "peerjs151_peer.py", arguments: ["--port", "\(url.port ?? 0)", "--key", "demo", "--id", "py151-caller",
                                                                            "--call", "swift-151", "--timeout", "40"])
        let data = try #require(try await events.first("CONNECTION from peerjs 1.5.1", timeout: .seconds(40)) { $0.dataConnection != nil }.dataConnection)
        #expect(data.serialization == .json)
        let dataEvents = Events(data.events())
        try await dataEvents.first("the port's hello (a text frame)") { $0 == .data(.text("hello from peerjs151")) }
        try data.send("echo: hello from peerjs151")
        try data.send("from ecvkit")
        try await dataEvents.first("the port's echo") { $0 == .data(.text("echo: from ecvkit")) }
        await data.closeAndWait()
        let summary = try await python.summary(timeout: .seconds(20))
        print("peerjs 1.5.1 → ecvkit: \(summary.raw)")
        #expect(summary.strings("received") == ["echo: hello from peerjs151", "from ecvkit", "<close notice>"], "\(summary.raw)")
        print("peerjs 1.5.1: its close event for ECVKit's close \(summary.strings("closed") == ["remote"] ? "came" : "did not come")")
        await swift.destroy()
        await service.stop()
    }
}

/// The service's page in headless Chromium, behaving as the PeerJS library does (issue #38).
@Suite(.serialized) struct PeerJSPageInteropTests {
    static let constraints = MediaConstraints(maxWidth: 160, maxHeight: 120, maxFrameRate: 10)

    /// Items 2 and 3, and the issue's bar: PeerJS closes a call and a data connection by closing
    /// their RTCPeerConnections. A call took 10.3 s to be noticed (the silence timer) and a data
    /// connection was never noticed; now both end on the close itself, 10 of 10 times. The test
    /// asks for under 5 s, half the call's 10 s silence limit, so only the close can end them; how
    /// fast (the issue's "within a second") is printed, not asserted: in a clean-clone run at load
    /// 8–27 calls took 0.04–1.03 s (median 0.22) and data 0.02–0.70 s (median 0.15).
    @Test(.enabled(if: InteropEnvironment.hasChromium, Comment(rawValue: InteropEnvironment.missingChromium)))
    func closesThePeerJSWayAreSeenBeforeAnySilenceLimitTenOfTenTimes() async throws {
        let (service, url) = try await PeerInteropTests.backend()
        let page = try PythonPeer(script: "peerjs_page.py", arguments: ["--timeout", "150", "--page",
            "http://127.0.0.1:\(url.port ?? 0)/peerjs/client?key=demo&id=chrome-closer&duration=140&serialization=raw"])
        try await eventually(.seconds(40), "the page registered") { service.peerServer?.registeredPeers(key: "demo").contains("chrome-closer") == true }
        let swift = Peer(id: "swift-hangup", options: PeerInteropTests.options(url))
        try await Events(swift.events()).first("OPEN") { if case .open = $0 { true } else { false } }
        let stream = try Navigator.getUserMedia(constraints: Self.constraints)
        var calls: [Duration] = [], data: [Duration] = []
        for _ in 0..<10 {
            let call = swift.call(peerId: "chrome-closer", stream: stream)
            let callEvents = Events(call.events())
            let control = swift.connect(peerId: "chrome-closer", options: ConnectOption(serialization: .raw))
            let controlEvents = Events(control.events())
            try await callEvents.first("STREAM from Chromium", timeout: .seconds(30)) { $0.stream != nil }
            try await controlEvents.first("data open", timeout: .seconds(20)) { $0 == .open }
            try control.send("hang up")
            let asked = ContinuousClock.now
            let callClosed = Task { try await callEvents.first("the call's CLOSE", timeout: .seconds(15)) { $0.isClose }; return ContinuousClock.now - asked }
            let dataClosed = Task { try await controlEvents.first("the data CLOSE", timeout: .seconds(15)) { $0 == .close }; return ContinuousClock.now - asked }
            calls.append(try await callClosed.value)
            data.append(try await dataClosed.value)
        }
        let finisher = swift.connect(peerId: "chrome-closer", options: ConnectOption(serialization: .raw))
        try await Events(finisher.events()).first("data open", timeout: .seconds(20)) { $0 == .open }
        try finisher.send("finish")
        let summary = try await page.summary(timeout: .seconds(30))
        print("PeerJS-way closes seen by ECVKit: calls \(calls.map { "\($0)".prefix(5) }), data \(data.map { "\($0)".prefix(5) })")
        #expect(summary.strings("closed").filter { $0.hasPrefix("hang up:") }.count == 20, "\(summary.raw)")
        // Item 8: PeerJS builds its remote stream from `event.streams[0]`; GStreamer writes msid per SSRC only.
        #expect(!summary.strings("errors").contains { $0.contains("without a stream") }, "\(summary.raw)")
        #expect(calls.allSatisfy { $0 < .seconds(5) } && data.allSatisfy { $0 < .seconds(5) }, "calls \(calls), data \(data)")
        await swift.destroy()
        await service.stop()
    }

    /// Items 5 and 6: a 100 KB message in PeerJS's BinaryPack chunks was lost both ways, and JSON
    /// answered in binary frames was unreadable to PeerJS ≤ 1.4 ("[object ArrayBuffer]" is not
    /// valid JSON). The page sends in each kind; ECVKit reads it and answers in kind, then closes
    /// the connection, which the page sees by PeerJS's in-band notice.
    @Test(.enabled(if: InteropEnvironment.hasChromium, Comment(rawValue: InteropEnvironment.missingChromium)),
          arguments: ["serialization=binary&big=100000", "serialization=json&jsonframes=text", "serialization=json&jsonframes=binary"])
    func dataAsEveryPeerJSVersionSendsIt(_ query: String) async throws {
        let (service, url) = try await PeerInteropTests.backend()
        let swift = Peer(id: "swift-data", options: PeerInteropTests.options(url))
        let events = Events(swift.events())
        try await events.first("OPEN") { if case .open = $0 { true } else { false } }
        let page = try PythonPeer(script: "peerjs_page.py", arguments: ["--page",
            "http://127.0.0.1:\(url.port ?? 0)/peerjs/client?key=demo&id=chrome-data&call=swift-data&duration=30&finish=dataclosed&\(query)"])
        let data = try #require(try await events.first("CONNECTION from Chromium", timeout: .seconds(40)) { $0.dataConnection != nil }.dataConnection)
        let dataEvents = Events(data.events())
        try await dataEvents.first("Chromium's hello") { $0 == .data(.text("hello from chromium")) }
        try data.send("echo: hello from chromium")
        if query.contains("big") {
            let big = String(repeating: "x", count: 100_000)
            try await dataEvents.first("Chromium's 100 KB in chunks") { $0 == .data(.text(big)) }
            try data.send("echo: " + big)
        }
        await data.closeAndWait()
        let summary = try await page.summary(timeout: .seconds(60))
        print("page \(query): \(summary.raw.prefix(400))")
        #expect(summary.strings("received").contains("echo: hello from chromium"), "\(summary.raw)")
        if query.contains("big") { #expect(summary.strings("received").contains("<100006 chars>"), "\(summary.raw)") }
        #expect(!summary.strings("errors").contains { $0.hasPrefix("data:") }, "\(summary.raw)")
        #expect(summary.strings("closed").first == "notice:data:swift-data", "the page saw ECVKit's close: \(summary.raw)")
        await swift.destroy()
        await service.stop()
    }
}
