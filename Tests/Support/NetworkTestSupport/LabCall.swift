import Foundation
import GLibCore
import GStreamer
import MediaPipeline
import MediaTestSupport
import WebRTC

/// A call between a peer in this process (the host namespace) and an `ecv-network-peer` child in
/// a `NetworkLab`, so every media packet crosses the lab's impaired veth pair while signaling
/// goes over the child's stdin/stdout, untouched.
package final class LabCall: Sendable {
    package let lab: NetworkLab
    package let local: PeerConnection
    /// Video frames the child decoded from us, and we from it (monotonic seconds).
    package let framesAtLab = FrameTimes()
    package let framesHere = FrameTimes()
    /// Adaptation steps of our sender and of the child's, in order.
    package let bandwidthHere = Locked<[BandwidthStep]>([])
    package let bandwidthAtLab = Locked<[BandwidthStep]>([])
    private let child: Process
    private let toChild: FileHandle
    /// What both ends' ICE and connection states did, and when each first frame came, in order
    /// (seconds since the call started): which layer a slow set-up waited for.
    package let milestones = Locked<[(time: Double, what: String)]>([])
    /// When the call started (monotonic seconds): the milestones' zero.
    package let started = ProcessInfo.processInfo.systemUptime
    private let childState = Locked("new")
    private let childICE = Locked("new")
    private let tasks = Locked<[Task<Void, Never>]>([])

    package struct BandwidthStep: Sendable {
        package var time: Double
        package var targetKbps: Int
        package var estimateKbps: Int
        package var reason: String
    }

    /// Starts both ends (we offer and send `pattern`; the lab peer takes `labRecovery`, or ours) and returns once each has decoded a first frame of the other.
    package static func start(lab: NetworkLab, codec: String = "VP8", recovery: LossRecovery = LossRecovery(),
                             labRecovery: LossRecovery? = nil, maxKbps: Int = 0, pattern: String = "smpte",
                             timeout: Duration = .seconds(20), replaysHandshake: Bool = true,
                             nudgesConnectivityChecks: Bool = true) async throws -> LabCall {
        try GStreamerRuntime.ensureInitialized()
        let call = try LabCall(lab: lab, codec: codec, recovery: recovery, labRecovery: labRecovery, maxKbps: maxKbps, pattern: pattern,
                               replaysHandshake: replaysHandshake, nudgesConnectivityChecks: nudgesConnectivityChecks)
        try await call.local.start()
        let deadline = ContinuousClock.now + timeout
        while call.framesHere.count == 0 || call.framesAtLab.count == 0 {
            guard ContinuousClock.now < deadline else {
                // Which layer stalled: ICE (both ends' connectivity checks) or what follows (DTLS, the first key frames).
                let here = "\(await call.local.peerState.rawValue), ICE \(await call.local.iceConnectionState.rawValue)"
                let lab = "\(call.childState.value), ICE \(call.childICE.value)"
                let frames = "frames here \(call.framesHere.count), at the lab \(call.framesAtLab.count)"
                await call.close()
                throw LabError(command: "call", message: "no frames both ways within \(timeout) (lab peer: \(lab); here: \(here); \(frames); "
                               + "\(call.milestoneSummary))")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return call
    }

    private init(lab: NetworkLab, codec: String, recovery: LossRecovery, labRecovery: LossRecovery?, maxKbps: Int, pattern: String,
                 replaysHandshake: Bool, nudgesConnectivityChecks: Bool) throws {
        self.lab = lab
        let parameters = MediaParameters(videoWidth: 320, videoHeight: 240, videoMaxBitrate: maxKbps, videoCodec: codec,
                                         noAudioProcessing: true, lossRecovery: recovery)
        let video: VideoSourceSpec = pattern == Self.movingBars ? .preset(name: Self.movingBars) : .testPattern(pattern: pattern)
        let media = MediaConfiguration(parameters: parameters, video: .single(video), audio: .testTone(),
                                       receiveVideo: .renderer(name: "lab_video"), presets: try Self.presets())
        child = lab.process(BuiltExecutable.url(named: "ecv-network-peer"),
                            ["answerer", codec, Self.argument(labRecovery ?? recovery) + (replaysHandshake ? "" : ",noreplay")
                                + (nudgesConnectivityChecks ? "" : ",nonudge"), String(maxKbps)])
        let input = Pipe(), output = Pipe()
        child.standardInput = input
        child.standardOutput = output
        child.standardError = FileHandle.standardError
        toChild = input.fileHandleForWriting
        let toChild = self.toChild
        let writeLock = Locked(())
        var configuration = PeerConfiguration(media: media)
        configuration.replaysHandshake = replaysHandshake
        configuration.nudgesConnectivityChecks = nudgesConnectivityChecks
        local = PeerConnection(configuration: configuration, role: .offerer) { message in
            let line: String
            switch message {
            case .offer(let sdp): line = "offer \(Data(sdp.utf8).base64EncodedString())"
            case .answer(let sdp): line = "answer \(Data(sdp.utf8).base64EncodedString())"
            case .candidate(let mline, _, let candidate): line = "candidate \(mline) \(Data(candidate.utf8).base64EncodedString())"
            case .bye: line = "bye"
            }
            writeLock.withLock { _ in Self.send(line, to: toChild.fileDescriptor) }
        }
        try child.run()
        let events = local.events()
        let framesHere = self.framesHere, bandwidthHere = self.bandwidthHere
        let milestones = self.milestones, started = self.started
        let note: @Sendable (String) -> Void = { what in
            milestones.withLock { $0.append((ProcessInfo.processInfo.systemUptime - started, what)) }
        }
        keep(Task {
            for await event in events {
                switch event {
                case .iceConnectionStateChanged(let state): note("here: ICE \(state.rawValue)")
                case .connectionStateChanged(let state): note("here: \(state.rawValue)")
                case .remoteStream(let stream) where stream.kind == .video:
                    stream.appSink?.setSampleHandler { _ in
                        if framesHere.count == 0 { note("here: first frame") }
                        framesHere.note(ProcessInfo.processInfo.systemUptime)
                    }
                case .bandwidthChanged(let decision):
                    bandwidthHere.withLock {
                        $0.append(BandwidthStep(time: ProcessInfo.processInfo.systemUptime, targetKbps: decision.targetKbps,
                                                estimateKbps: decision.estimateKbps, reason: decision.reason))
                    }
                default: break
                }
            }
        })
        let (lines, feed) = AsyncStream.makeStream(of: String.self)
        LineReader.start(output.fileHandleForReading.fileDescriptor, { feed.yield($0) }, finished: { feed.finish() })
        let local = self.local, framesAtLab = self.framesAtLab, bandwidthAtLab = self.bandwidthAtLab, childState = self.childState
        let childICE = self.childICE
        keep(Task {
            for await line in lines {
                let fields = line.split(separator: " ")
                guard let verb = fields.first else { continue }
                func text(_ field: Substring) -> String { Data(base64Encoded: String(field)).map { String(decoding: $0, as: UTF8.self) } ?? "" }
                switch verb {
                case "offer" where fields.count == 2: await local.receive(.offer(sdp: text(fields[1])))
                case "answer" where fields.count == 2: await local.receive(.answer(sdp: text(fields[1])))
                case "candidate" where fields.count == 3:
                    await local.receive(.candidate(mlineIndex: Int(fields[1]) ?? 0, mid: nil, candidate: text(fields[2])))
                case "frame" where fields.count == 2:
                    if framesAtLab.count == 0 { note("lab: first frame") }
                    framesAtLab.note(Double(fields[1]) ?? 0)
                case "state" where fields.count == 2:
                    childState.withLock { $0 = String(fields[1]) }
                    note("lab: \(fields[1])")
                case "ice" where fields.count == 2:
                    childICE.withLock { $0 = String(fields[1]) }
                    note("lab: ICE \(fields[1])")
                case "bandwidth" where fields.count == 4:
                    bandwidthAtLab.withLock {
                        $0.append(BandwidthStep(time: ProcessInfo.processInfo.systemUptime, targetKbps: Int(fields[1]) ?? 0,
                                                estimateKbps: Int(fields[2]) ?? 0, reason: String(fields[3])))
                    }
                default: break
                }
            }
        })
    }

    /// Colour bars sliding sideways: fills the encoder's budget like camera video (1.35 Mbit/s at
    /// 1.5 Mbit/s, 320×240 VP8, 5 KB key frames), unlike the still or nearly black patterns.
    package static let movingBars = "moving-bars"

    static func presets() throws -> PresetLibrary {
        let bars = try Preset.parse(name: movingBars, text: "# kind: video-source\nvideotestsrc is-live=true pattern=smpte horizontal-speed=3\n")
        return try PresetLibrary(PresetLibrary.builtInFiles.map { try Preset.parse(name: $0.name, text: $0.text) } + [bars])
    }

    /// `LossRecovery` as the lab peer's command line names it.
    package static func argument(_ recovery: LossRecovery) -> String {
        let parts = [recovery.retransmission ? "nack" : nil, recovery.forwardErrorCorrection ? "fec" : nil,
                     recovery.bandwidthAdaptation ? "adapt" : nil].compactMap { $0 }
        return parts.isEmpty ? "off" : parts.joined(separator: ",")
    }

    /// Writes one line to the child with write(2): a child that is gone (EPIPE) or a signal
    /// (EINTR) must not end the test process, as FileHandle's writes would.
    static func send(_ line: String, to descriptor: Int32) {
        var bytes = Array((line + "\n").utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }

    private func keep(_ task: Task<Void, Never>) { tasks.withLock { $0.append(task) } }

    /// The milestones as one line: "0.12 here: ICE checking, …".
    package var milestoneSummary: String {
        milestones.value.map { String(format: "%.2f ", $0.time) + $0.what }.joined(separator: ", ")
    }

    /// The lab peer's last reported state ("connected", "failed", …).
    package var labState: String { childState.value }

    /// Ends the call: the child gets `bye` and is killed if it lingers; our peer closes.
    package func close() async {
        Self.send("bye", to: toChild.fileDescriptor)
        // The child may be gone already, its end of the pipe with it.
        try? toChild.close()
        let child = self.child
        let deadline = Date().addingTimeInterval(3)
        while child.isRunning, Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        if child.isRunning { kill(child.processIdentifier, SIGKILL) }
        await local.close()
        for task in tasks.value { task.cancel() }
    }
}

/// When frames arrived, for counting them and finding freezes.
package final class FrameTimes: Sendable {
    private let times = Locked<[Double]>([])

    package func note(_ time: Double) { times.withLock { $0.append(time) } }
    package var count: Int { times.value.count }
    package var all: [Double] { times.value }

    package func count(from start: Double, to end: Double) -> Int { times.value.filter { $0 >= start && $0 < end }.count }

    /// The longest time without a frame inside [start, end], counting the edges.
    package func longestGap(from start: Double, to end: Double) -> Double {
        let inside = [start] + times.value.filter { $0 > start && $0 < end } + [end]
        return zip(inside, inside.dropFirst()).map { $1 - $0 }.max() ?? (end - start)
    }

    /// The first frame at or after `time`.
    package func first(after time: Double) -> Double? { times.value.first { $0 >= time } }
}

