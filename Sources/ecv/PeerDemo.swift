import ECV
import ECVPeer
import ECVService
import Foundation
import GLibCore

/// `ecv demo --peer`: the SkyWay tutorial's flow on this machine. Two peers on the embedded peer
/// server find each other (listAllPeers), one calls, the other answers; they exchange data, the
/// caller switches camera, the call is recorded, the caller hangs up; a summary closes the run.
enum PeerDemo {
    static func run(directory: URL, codec: String, json: Bool) async throws(CLIError) {
        var configuration = ReferenceServiceConfiguration()
        configuration.peerServer = PeerServerConfiguration(keys: [PeerAPIKey(key: "demo", allowDiscovery: true)])
        let service: ReferenceService, url: URL
        do {
            service = try ReferenceService(configuration: configuration)
            url = try await service.start(host: "127.0.0.1", port: 0)
        } catch {
            throw .failed("the peer server did not start: \(error)")
        }
        let out = PeerPrinter(json: json)
        let started = ContinuousClock.now
        let note: @Sendable (String, [String: any Sendable], String) -> Void = { name, fields, text in
            let seconds = Double((ContinuousClock.now - started).nanoseconds) / 1e9
            out.event(name, fields.merging(["t": (seconds * 100).rounded() / 100]) { a, _ in a }, text: String(format: "%6.2fs  ", seconds) + text)
        }
        let options = PeerOption(key: "demo", host: "127.0.0.1", port: url.port ?? 0, path: "/peerjs")
        do {
            let summary = try await flow(options: options, directory: directory, codec: codec, note: note)
            out.event("summary", summary.fields, text: summary.text)
        } catch {
            await service.stop()
            throw .failed("the peer demo failed: \(error)")
        }
        await service.stop()
    }

    struct Summary: Sendable {
        var fields: [String: any Sendable] = [:]
        var text = ""
    }

    static func flow(options: PeerOption, directory: URL, codec: String,
                     note: @escaping @Sendable (String, [String: any Sendable], String) -> Void) async throws -> Summary {
        let alice = Peer(id: "alice", options: options), bob = Peer(id: "bob", options: options)
        let aliceId = try await openId(alice), bobId = try await openId(bob)
        note("open", ["alice": aliceId, "bob": bobId], "alice and bob are open on the peer server")
        let constraints = MediaConstraints(maxWidth: 640, maxHeight: 480, maxFrameRate: 30, videoCodec: codec)
        let aliceStream = try Navigator.getUserMedia(constraints: constraints), bobStream = try Navigator.getUserMedia(constraints: constraints)
        let others = await alice.listAllPeers().filter { $0.caseInsensitiveCompare(aliceId) != .orderedSame }
        note("peers", ["peers": others], "alice lists the peers: \(others.joined(separator: ", "))")
        guard let target = others.first else { throw CLIError.failed("alice found nobody to call") }

        let incoming = Task { () -> MediaConnection? in
            for await event in bob.events() { if case .call(let call) = event { return call } }
            return nil
        }
        let call = alice.call(peerId: target, stream: aliceStream)
        note("call", ["to": target], "alice calls \(target)")
        guard let callAtBob = await incoming.value else { throw CLIError.failed("bob got no CALL") }
        callAtBob.answer(stream: bobStream)
        note("answer", [:], "bob answers")
        let remoteAtAlice = try await firstStream(call), remoteAtBob = try await firstStream(callAtBob)
        note("stream", [:], "STREAM on both sides")
        // Named after the call, so a second run records beside the first instead of failing on it.
        let file = directory.appendingPathComponent("peer-call-\(call.connectionId.suffix(8)).mkv")
        try await call.startRecording(to: file)
        note("recording", ["file": file.path], "alice records the call to \(file.path)")

        let bobData = Task { () -> DataConnection? in
            for await event in bob.events() { if case .connection(let connection) = event { return connection } }
            return nil
        }
        let data = alice.connect(peerId: target)
        guard let dataAtBob = await bobData.value else { throw CLIError.failed("bob got no CONNECTION") }
        let echoed = Locked<[String]>([])
        dataAtBob.on(.DATA) { event in if case .data(.text(let text)) = event { try? dataAtBob.send("echo: " + text) } } // refused only once closed
        data.on(.DATA) { event in if case .data(.text(let text)) = event { echoed.withLock { $0.append(text) } } }
        try await waitUntil("the data connection opened") { data.isOpen && dataAtBob.isOpen }
        try data.send("hello bob")
        try await waitUntil("bob's echo") { !echoed.value.isEmpty }
        note("data", ["received": echoed.value], "alice → bob: \"hello bob\"; bob → alice: \"\(echoed.value.first ?? "")\"")

        try await Task.sleep(for: .seconds(1.5))
        let camera = try await aliceStream.switchCamera()
        note("camera", ["position": camera.rawValue], "alice switches to the \(camera.rawValue) camera")
        try await Task.sleep(for: .seconds(1.5))
        await bobStream.setEnableAudioTrack(enable: false)
        note("mute", [:], "bob mutes his microphone")
        try await Task.sleep(for: .seconds(1))
        let recorded = try await call.stopRecording()
        let closing = Task { () -> Bool in
            for await event in callAtBob.events() { if case .close = event { return true } }
            return true
        }
        let hungUp = ContinuousClock.now
        await call.closeAndWait()
        _ = await closing.value
        let closeDelay = Double((ContinuousClock.now - hungUp).nanoseconds) / 1e6
        note("close", ["afterMs": closeDelay.rounded()], String(format: "alice hangs up; bob's CLOSE after %.0f ms", closeDelay))
        let framesAtAlice = remoteAtAlice.videoFrameCount, framesAtBob = remoteAtBob.videoFrameCount
        await alice.destroy()
        await bob.destroy()
        var summary = Summary()
        summary.fields = ["framesAliceReceived": framesAtAlice, "framesBobReceived": framesAtBob, "echo": echoed.value,
                          "camera": camera.rawValue, "recording": file.path, "tracks": recorded?.tracks.count ?? 0,
                          "closeMs": closeDelay.rounded(), "codec": codec]
        summary.text = """
            peer demo summary
              peers          alice, bob (found by listAllPeers)
              media          alice received \(framesAtAlice) frames, bob \(framesAtBob) (\(codec))
              data           "hello bob" → "\(echoed.value.first ?? "-")"
              camera         alice switched to \(camera.rawValue)
              recording      \(file.path): \(recorded?.tracks.count ?? 0) tracks, \(recorded.map { String(format: "%.1f s", $0.duration.seconds) } ?? "-")
              hang-up        bob's CLOSE \(String(format: "%.0f", closeDelay)) ms after alice closed
            """
        return summary
    }

    static func openId(_ peer: Peer) async throws -> String {
        for await event in peer.events() {
            switch event {
            case .open(let id): return id
            case .error(let error): throw CLIError.failed("\(error)")
            default: continue
            }
        }
        throw CLIError.failed("the peer closed before OPEN")
    }

    static func firstStream(_ call: MediaConnection) async throws -> ECVPeer.MediaStream {
        for await event in call.events() {
            switch event {
            case .stream(let stream): return stream
            case .error(let error): throw CLIError.failed("\(error)")
            case .close: throw CLIError.failed("the call closed before its STREAM")
            }
        }
        throw CLIError.failed("the call ended")
    }

    static func waitUntil(_ what: String, _ condition: @Sendable () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(15)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw CLIError.failed("timed out: \(what)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
