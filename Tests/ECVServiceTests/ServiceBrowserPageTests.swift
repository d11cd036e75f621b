import ECVProtocol
import ECVService
import Foundation
import MediaTestSupport
import Soup
import Synchronization
import Testing

/// Runs the `/r/<room>` page's own script in Node.js against the live service: real `fetch` and
/// WebSocket, a DOM stub, and a stand-in `RTCPeerConnection` that logs what the page asks of it.
/// Skipped where Node.js (≥ 20, for `--experimental-websocket`) is not installed.
final class PageRunner: Sendable {
    static let nodePath: String? = ["/usr/bin/node", "/usr/local/bin/node", "/usr/bin/nodejs"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    private let process: Process
    private let harnessFile: URL
    private let lines: AsyncStream<String>
    private let output = Transcript()

    /// `drive`: the harness opens the page's own text channel and plays an agent's commands on it.
    init(pageURL: String, drive: Bool = false) throws {
        let harness = FileManager.default.temporaryDirectory.appendingPathComponent("ecv-page-\(UUID().uuidString).mjs")
        try Self.harness.write(to: harness, atomically: true, encoding: .utf8)
        let process = Process()
        guard let node = Self.nodePath else { throw UnexpectedFrame(description: "Node.js is not installed") }
        process.executableURL = URL(fileURLWithPath: node)
        process.arguments = ["--experimental-websocket", "--no-warnings", harness.path, pageURL] + (drive ? ["drive"] : [])
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let (lines, continuation) = AsyncStream<String>.makeStream()
        self.process = process
        self.harnessFile = harness
        self.lines = lines
        try process.run()
        PipeReader.lines(pipe.fileHandleForReading, onEnd: { continuation.finish() }) { continuation.yield($0) }
    }

    /// Reads the page's output until a line starting with `prefix`; returns that line.
    @discardableResult
    func waitForLine(_ prefix: String) async throws -> String {
        let lines = lines
        let output = output
        let found = try await within(15, "the page printing \(prefix)") {
            for await line in lines {
                output.append(line)
                if line.hasPrefix(prefix) { return line }
            }
            return ""
        }
        if found.isEmpty {
            throw UnexpectedFrame(description: "the page ended before \(prefix):\n" + output.lines.joined(separator: "\n"))
        }
        return found
    }

    var transcript: [String] { output.lines }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: harnessFile)
    }

    /// Loads the page like a browser would and runs its inline script with stubs.
    static let harness = #"""
    const pageUrl = process.argv[2];
    const drive = process.argv[3] === 'drive';
    const room = decodeURIComponent(new URL(pageUrl).pathname.split('/').pop());
    const realFetch = fetch;
    globalThis.fetch = (url, init) => {
      const auth = init && init.headers && init.headers['X-ECV-Token'];
      if (auth) console.log('AUTH ' + new URL(url).pathname + ' ' + auth);
      return realFetch(url, init);
    };
    const html = await (await fetch(pageUrl)).text();
    const settings = html.match(/<script id="ecv-settings" type="application\/json">([\s\S]*?)<\/script>/)[1];
    const script = html.match(/<script>\n([\s\S]*?)<\/script>/)[1];
    const elements = {};
    const element = (id) => elements[id] ??= {
      id, textContent: id === 'ecv-settings' ? settings : '', disabled: false, value: '', srcObject: null,
      prepend(item) { console.log('LOG ' + item.textContent.replace(/^.*?  /, '')); }, // drops the time
      addEventListener(type, listener) { this['on' + type] = listener; },
    };
    globalThis.document = { getElementById: element, createElement: () => ({ textContent: '' }) };
    globalThis.window = { addEventListener() {}, location: new URL(pageUrl) };
    Object.defineProperty(globalThis, 'navigator', { value: {
      mediaDevices: { getUserMedia: async () => { const e = new Error('no camera here'); e.name = 'NotFoundError'; throw e; } },
      sendBeacon: (url, body) => { fetch(url, { method: 'POST', body: body ?? '' }); return true; },
    } });
    globalThis.MediaStream = class { constructor(tracks) { this.tracks = tracks; } };
    globalThis.RTCPeerConnection = class {
      constructor(config) { console.log('PC_CONFIG ' + JSON.stringify(config)); this.connectionState = 'new'; }
      addTrack() {}
      addTransceiver(kind, init) { console.log('TRANSCEIVER ' + kind + ' ' + init.direction); }
      createDataChannel(label) {
        console.log('CHANNEL ' + label);
        const channel = { label, readyState: 'connecting', send(text) { console.log('SENT ' + text); } };
        if (drive) setTimeout(() => playAgent(channel), 50);
        return channel;
      }
      async createOffer() { return { type: 'offer', sdp: 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=browser-offer\r\nt=0 0\r\n' }; }
      async createAnswer() { return { type: 'answer', sdp: 'v=0\r\no=- 2 2 IN IP4 127.0.0.1\r\ns=browser-answer\r\nt=0 0\r\n' }; }
      async setLocalDescription(description) {
        setTimeout(() => this.onicecandidate({ candidate: {
          candidate: 'candidate:9 1 UDP 2015363327 127.0.0.1 50000 typ host', sdpMid: '0', sdpMLineIndex: 0 } }), 20);
      }
      async setRemoteDescription(description) { console.log('REMOTE ' + description.type + ' ' + description.sdp.split('\r\n')[2]); }
      async addIceCandidate(candidate) { console.log('CANDIDATE ' + candidate.sdpMid + ' ' + candidate.candidate); }
      close() { console.log('CLOSED'); }
    };
    // An agent's commands on the page's channel, and what the page shows and sends back.
    async function playAgent(channel) {
      channel.readyState = 'open';
      channel.onopen();
      channel.onmessage({ data: 'FLASH_ON' });
      channel.onmessage({ data: 'HOLD|' + room });
      console.log('HELD ' + element('hold').className + ' ' + JSON.stringify(window.ecvTest.state().onHold));
      window.ecvTest.mute('audio', true);
      channel.onmessage({ data: 'PICKUP|' + room });
      channel.onmessage({ data: '<b>not html</b>' });
      const state = window.ecvTest.state();
      console.log('STATE ' + JSON.stringify({ onHold: state.onHold, received: state.received, sent: state.sent, muted: state.muted }));
      console.log('HANGUP ' + await window.ecvTest.hangup());
    }
    new Function(script)();
    """#
}

/// Lines the page printed, as read so far.
final class Transcript: Sendable {
    private let storage = Mutex<[String]>([])
    func append(_ line: String) { storage.withLock { $0.append(line) } }
    var lines: [String] { storage.withLock { $0 } }
}

extension ServiceTests {
    @Suite("Browser page", .enabled(if: PageRunner.nodePath != nil, "needs Node.js")) struct BrowserPageTests {
        static let offer = SignalingMessage.offer(sdp: "v=0\r\no=- 7 7 IN IP4 127.0.0.1\r\ns=agent-offer\r\nt=0 0\r\n")
        static let candidate = SignalingMessage.candidate(ICECandidate(sdpMLineIndex: 0, sdpMid: "video0",
                                                                       candidate: "candidate:1 1 UDP 1 127.0.0.1 40000 typ host"))

        @Test func thePageAnswersAnOfferWaitingInTheRoom() async throws {
            let test = try await TestService.start(callerTokens: false) { $0.iceServers = [ICEServer(urls: ["stun:127.0.0.1:3478"])] }
            let room = "rtc-page-1"
            let agent = try #require(try await test.join(room).params)
            let socket = try await SocketProbe.connect(agent.wssUrl)
            try socket.send(ColliderCommand.register(roomId: room, clientId: agent.clientId))
            try socket.send(ColliderCommand.send(Self.offer))
            try socket.send(ColliderCommand.send(Self.candidate))

            let page = try PageRunner(pageURL: test.base + "/r/" + room)
            defer { page.stop() }
            #expect(try await page.waitForLine("PC_CONFIG")
                == #"PC_CONFIG {"bundlePolicy":"max-bundle","iceServers":[{"urls":["stun:127.0.0.1:3478"]}],"rtcpMuxPolicy":"require"}"#)
            #expect(try await page.waitForLine("REMOTE") == "REMOTE offer s=agent-offer")
            #expect(try await page.waitForLine("CANDIDATE") == "CANDIDATE video0 candidate:1 1 UDP 1 127.0.0.1 40000 typ host")
            #expect(try await socket.next(ColliderDelivery.self)
                == .message(.answer(sdp: "v=0\r\no=- 2 2 IN IP4 127.0.0.1\r\ns=browser-answer\r\nt=0 0\r\n")))
            #expect(try await socket.next(ColliderDelivery.self) == .message(.candidate(ICECandidate(
                sdpMLineIndex: 0, sdpMid: "0", candidate: "candidate:9 1 UDP 2015363327 127.0.0.1 50000 typ host"))))
            try await page.waitForLine("LOG registered")
            try socket.send(ColliderCommand.send(.bye))
            try await page.waitForLine("LOG the other side left")
            try await page.waitForLine("CLOSED")
            await test.stop()
        }

        @Test func thePageOffersWhenItJoinsFirst() async throws {
            let test = try await TestService.start(callerTokens: false)
            let room = "rtc-page-2"
            let log = test.service.log.subscribe()
            let page = try PageRunner(pageURL: test.base + "/r/" + room)
            defer { page.stop() }
            try await page.waitForLine("CHANNEL textchannel")
            try await waitFor(log, "the page's offer") { $0.hasPrefix("offer from") && $0.contains("room \(room)") }
            let agent = try #require(try await test.join(room).params)
            #expect(!agent.isInitiator)
            guard case .offer(let sdp)? = agent.messages.first else {
                Issue.record("the page's offer waits in the room: \(agent.messages)\n\(page.transcript.joined(separator: "\n"))")
                return
            }
            #expect(sdp.contains("s=browser-offer"))
            let socket = try await SocketProbe.connect(agent.wssUrl)
            try socket.send(ColliderCommand.register(roomId: room, clientId: agent.clientId))
            try socket.send(ColliderCommand.send(Self.answer))
            #expect(try await page.waitForLine("REMOTE") == "REMOTE answer s=agent-answer")
            #expect(page.transcript.contains("TRANSCEIVER video recvonly"), "a camera-less page still asks for video")
            await test.stop()
        }

        @Test func thePageActsAsACaller() async throws {
            let test = try await TestService.start()
            let room = try await test.dial()
            let token = try #require(test.callerToken(room))
            let page = try PageRunner(pageURL: test.base + "/r/" + room + "?role=caller&label=text&token=" + token, drive: true)
            defer { page.stop() }
            try await page.waitForLine("CHANNEL text")
            #expect(try await page.waitForLine("SENT") == "SENT FLASH_ON|UNAVAILABLE", "a browser has no torch")
            #expect(try await page.waitForLine("HELD") == "HELD shown true")
            #expect(try await page.waitForLine("SENT STATUS") == "SENT STATUS|AUDIO|MUTED|\(room)")
            let state = try await page.waitForLine("STATE")
            #expect(state == "STATE " + #"{"onHold":false,"received":["FLASH_ON","HOLD|\#(room)","PICKUP|\#(room)","<b>not html</b>"],"#
                + #""sent":["FLASH_ON|UNAVAILABLE","STATUS|AUDIO|MUTED|\#(room)"],"muted":{"audio":true,"video":false}}"#)
            #expect(try await page.waitForLine("AUTH /api/Hangup") == "AUTH /api/Hangup " + token)
            #expect(try await page.waitForLine("HANGUP") == "HANGUP 200")
            #expect(page.transcript.contains("LOG peer: <b>not html</b>"), "shown as text")
            await test.stop()
        }

        static let answer = SignalingMessage.answer(sdp: "v=0\r\no=- 8 8 IN IP4 127.0.0.1\r\ns=agent-answer\r\nt=0 0\r\n")
    }
}
