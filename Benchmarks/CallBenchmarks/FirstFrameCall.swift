import BenchmarkSupport
import ECV
import ECVAgent
import Foundation
import GLibCore
import MediaPipeline

/// Who sends the video the ECVKit agent bot receives in a first-frame call.
enum FirstFrameSender: String, CaseIterable, Codable, Sendable {
    case ecvkit, aiortc, chromium

    /// aiortc has no VP9 encoder (its codecs are VP8 and H.264).
    func sends(_ codec: String) -> Bool { self != .aiortc || codec != "VP9" }
}

/// The times one call's receiver saw, on CLOCK_MONOTONIC, from whatever thread saw them.
final class FirstFrameMarks: Sendable {
    private struct State {
        var connected: UInt64?
        var firstFrame: UInt64?
        var connectedBeforeWatching = false
    }
    private let state = Locked(State())

    func connected(late: Bool = false) {
        let now = MonotonicClock.nanoseconds()
        state.withLock { state in
            if state.connected == nil { state.connected = now; state.connectedBeforeWatching = late }
        }
    }

    func frame() {
        let now = MonotonicClock.nanoseconds()
        state.withLock { if $0.firstFrame == nil { $0.firstFrame = now } }
    }

    var connectedAt: UInt64? { state.withLock { $0.connected } }
    var firstFrameAt: UInt64? { state.withLock { $0.firstFrame } }
    var connectedBeforeWatching: Bool { state.withLock { $0.connectedBeforeWatching } }
}

/// One measured call's figures; a call that failed keeps its reason and whatever it measured.
struct FirstFrameCall: Codable, Sendable {
    var index: Int
    /// The bot's `connected` (its WebRtcConnected) → its renderer's first decoded frame of the caller.
    var connectedToFirstFrameMs: Double?
    /// Calling `startRecording` mid-call → the recording's remote video track wrote its first frame.
    var attachToFirstWrittenMs: Double?
    /// How long `startRecording` itself took to return (part of the figure above).
    var startRecordingReturnedMs: Double?
    /// A foreign sender's own record of key-frame requests reaching it, ms after `startRecording` was
    /// called (Chromium: its stats sampled every 100 ms; aiortc: when its sender answered one).
    var senderKeyFrameRequestsMs: [Double]?
    var failure: String?
    /// 1-minute load average when the call started.
    var load: Double
}

/// What a first-frame call needs from its cell.
struct FirstFrameContext: Sendable {
    var codec: String
    var sender: FirstFrameSender
    var sdk: ECVSdk
    var bot: AgentBot
    var base: String
    var python: String
    var work: String
    /// Time between the first frame and starting the recording: the sender's start key frames
    /// (0, 0.4 and 1.5 s after it connected) are over, as for a recorder that joins a running call.
    var settle: Duration = .seconds(2)
}

extension FirstFrameContext {
    /// One call: dial, the bot answers and receives, the sender sends; then a recording starts.
    /// `phase` names the step under way, so a call that never ends says where it stopped.
    func call(_ index: Int, phase: Locked<String>) async -> FirstFrameCall {
        func step(_ name: String) { phase.withLock { $0 = name } }
        var result = FirstFrameCall(index: index, load: MachineInfo.loadAverage().first ?? 0)
        let botEvents = bot.events()
        step("createVideoCall")
        guard let call = await sdk.createVideoCall() else {
            result.failure = "createVideoCall gave no call"
            return result
        }
        let callerEvents = call.events()
        let dial = Task { await call.start(dialCallParameters: DialCallParameters(callerName: "First frame \(index)")) }
        var peer: BrowserPeer?
        var callerTask: Task<Void, Never>?
        let marks = FirstFrameMarks()
        var agentCall: AgentCall?
        do {
            step("waiting for the bot to answer")
            let answered = try await Self.callStarted(botEvents, rtcId: call.rtcId, timeout: .seconds(20))
            agentCall = answered
            answered.onCallerFrame { _ in marks.frame() }
            let events = answered.events()
            let watcher = Task { for await event in events { if case .connected = event { marks.connected(); return } } }
            defer { watcher.cancel() }
            if answered.isConnected { marks.connected(late: true) }
            switch sender {
            case .ecvkit:
                let parameters = ConnectParameters(videoWidth: 640, videoHeight: 480, videoCodec: codec, noAudioProcessing: true)
                callerTask = Task {
                    for await event in callerEvents where event.type == .AgentConnected {
                        guard let connection = call.connect(parameters: parameters) else { return }
                        await connection.startRoom()
                        return
                    }
                }
            case .aiortc, .chromium:
                // The bot joins first and offers, as in the interop tests' answering foreign caller.
                try await Self.until(.seconds(20), "the bot joined room \(call.rtcId)") {
                    answered.eventHistory.contains(.joinedRoom(initiator: true))
                }
                guard let token = call.callerToken else { throw BenchmarkError.failed("the dial gave no caller token") }
                peer = try foreignPeer(room: call.rtcId, token: token)
            }
            step("waiting for the first decoded frame")
            try await Self.until(.seconds(30), "the bot's first decoded frame") { marks.firstFrameAt != nil }
            if marks.connectedBeforeWatching { result.failure = "connected before the benchmark watched: not measured" }
            if let connected = marks.connectedAt, let frame = marks.firstFrameAt, !marks.connectedBeforeWatching {
                result.connectedToFirstFrameMs = (Double(frame) - Double(connected)) / 1e6
            }
            try await Task.sleep(for: settle)
            let url = URL(fileURLWithPath: (work as NSString).appendingPathComponent("first-frame-\(codec)-\(sender.rawValue)-\(index).mkv"))
            // A file left by an earlier run's call that never ended would refuse the recording.
            if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
            let attachWallMs = Date().timeIntervalSince1970 * 1000
            let attach = MonotonicClock.nanoseconds()
            step("startRecording")
            try await answered.startRecording(to: url)
            result.startRecordingReturnedMs = Double(MonotonicClock.nanoseconds() - attach) / 1e6
            step("waiting for the recording's first remote video frame")
            do {
                try await Self.until(.seconds(15), "the recording's first remote video frame", every: .milliseconds(1)) {
                    answered.activeRecording?.recorder.startedTracks.contains(.remoteVideo) == true
                }
            } catch {
                // Evidence for a recording that never starts: the call's and the recorder's graphs.
                let base = (work as NSString).appendingPathComponent("first-frame-\(codec)-\(sender.rawValue)-\(index)")
                try (await answered.pipelineDOT() ?? "").write(toFile: base + "-call.dot", atomically: true, encoding: .utf8)
                try (answered.activeRecording?.recorder.dot ?? "").write(toFile: base + "-recorder.dot", atomically: true, encoding: .utf8)
                throw error
            }
            result.attachToFirstWrittenMs = Double(MonotonicClock.nanoseconds() - attach) / 1e6
            step("stopRecording")
            _ = try await answered.stopRecording()
            try FileManager.default.removeItem(at: url)
            if let peer {
                step("waiting for the sender's summary")
                let summary = try await peer.summary(timeout: 40)
                result.senderKeyFrameRequestsMs = summary.keyFrameRequestTimes.map { ($0 - attachWallMs).rounded() }
            }
        } catch {
            result.failure = "\(error)"
        }
        callerTask?.cancel()
        step("the bot hanging up")
        await agentCall?.hangup()
        call.hangup()
        dial.cancel()
        step("closing the sender")
        await peer?.close()
        step("waiting for the bot's call to end")
        // The bot is offered the next call only once this one has ended on its side.
        do { try await Self.until(.seconds(10), "the bot's call ended") { agentCall?.isEnded ?? true } } catch {
            result.failure = result.failure ?? "\(error)"
        }
        return result
    }

    private func foreignPeer(room: String, token: String) throws -> BrowserPeer {
        // Seconds of media after the text channel opened: past the first frame, the 2 s settle and the recording's start.
        let duration = "8"
        switch sender {
        case .aiortc:
            return try BrowserPeer(name: "aiortc", command: [python, "-u", "Tests/Interop/peers/aiortc_peer.py", "--url", base, "--room", room,
                                                             "--role", "caller", "--codec", codec, "--token", token, "--duration", duration,
                                                             "--connect-timeout", "30"])
        case .chromium, .ecvkit:
            var page = URLComponents(string: base + "/r/" + room)
            page?.queryItems = [URLQueryItem(name: "role", value: "caller"), URLQueryItem(name: "codec", value: codec),
                                URLQueryItem(name: "video", value: "640x480"), URLQueryItem(name: "token", value: token),
                                URLQueryItem(name: "watch", value: "keyframes")]
            guard let url = page?.string else { throw BenchmarkError.failed("no page URL for room \(room)") }
            return try BrowserPeer(name: "chromium", command: [python, "-u", "Tests/Interop/peers/chromium_peer.py", "--page", url,
                                                               "--duration", duration, "--connect-timeout", "45"])
        }
    }

    static func callStarted(_ events: AsyncStream<AgentBotEvent>, rtcId: String, timeout: Duration) async throws -> AgentCall {
        try await withThrowingTaskGroup(of: AgentCall.self) { group in
            group.addTask {
                for await event in events { if case .callStarted(let call) = event, call.rtcId == rtcId { return call } }
                throw BenchmarkError.failed("the bot's events ended before it answered")
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw BenchmarkError.failed("the bot did not answer within \(timeout)")
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    /// Polls `condition` until it holds; throws naming `what` after `timeout`.
    static func until(_ timeout: Duration, _ what: String, every interval: Duration = .milliseconds(2),
                      _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { throw BenchmarkError.failed("no \(what) within \(timeout)") }
            try await Task.sleep(for: interval)
        }
    }
}
