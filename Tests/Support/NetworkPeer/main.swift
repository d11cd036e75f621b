// ecv-network-peer: one end of a call that runs in a network namespace (see NetworkLab), with its
// signaling over stdin/stdout so the test in the host namespace is the other end.
//
//   ecv-network-peer <offerer|answerer> <VP8|VP9|H264> <recovery> [max video kbit/s]
//
// <recovery>: `off`, or the parts of `LossRecovery` to turn on, comma-separated: nack,fec,adapt;
// `noreplay` among them turns the DTLS handshake replay off (PeerConfiguration.replaysHandshake),
// `nonudge` the connectivity-check nudges (PeerConfiguration.nudgesConnectivityChecks).
//
// stdin, one message a line: `offer <base64 SDP>`, `answer <base64 SDP>`,
// `candidate <m-line> <base64 candidate>`, `bye`. stdout: the same for what this end sends, plus
// `state <peer state>`, `frame <seconds on the system's monotonic clock>` for every video frame
// decoded from the far end, `bandwidth <target kbit/s> <estimate kbit/s> <reason>` for every
// adaptation step. Exits when stdin closes, on `bye`, or when its parent is gone.
import Foundation
import GLibCore
import GStreamer
import MediaPipeline
import MediaRuntime
import WebRTC

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("ecv-network-peer: \(message)\n".utf8))
    exit(1)
}

// write(2), not FileHandle: a parent that went away (EPIPE) must end this process quietly.
signal(SIGPIPE, SIG_IGN)
let output = Locked(())
func say(_ line: String) {
    output.withLock { _ in
        var bytes = Array((line + "\n").utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { exit(0) }
            bytes = bytes.dropFirst(written)
        }
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 3, let role = PeerConnection.Role(rawValue: arguments[0]) else {
    fail("usage: ecv-network-peer <offerer|answerer> <VP8|VP9|H264> <off|nack,fec,adapt> [max video kbit/s]")
}
let parts = Set(arguments[2].split(separator: ",").map(String.init))
let recovery = LossRecovery(retransmission: parts.contains("nack"), forwardErrorCorrection: parts.contains("fec"),
                            bandwidthAdaptation: parts.contains("adapt"))
let parameters = MediaParameters(videoWidth: 320, videoHeight: 240, videoMaxBitrate: arguments.count > 3 ? Int(arguments[3]) ?? 0 : 0,
                                 videoCodec: arguments[1], noAudioProcessing: true, lossRecovery: recovery)
let media = MediaConfiguration(parameters: parameters, video: .single(.testPattern(pattern: "ball")), audio: .testTone(),
                               receiveVideo: .renderer(name: "remote_video"))

try GStreamerRuntime.ensureInitialized()
var configuration = PeerConfiguration(media: media)
configuration.replaysHandshake = !parts.contains("noreplay")
configuration.nudgesConnectivityChecks = !parts.contains("nonudge")
let peer = PeerConnection(configuration: configuration, role: role) { message in
    switch message {
    case .offer(let sdp): say("offer \(Data(sdp.utf8).base64EncodedString())")
    case .answer(let sdp): say("answer \(Data(sdp.utf8).base64EncodedString())")
    case .candidate(let mline, _, let candidate): say("candidate \(mline) \(Data(candidate.utf8).base64EncodedString())")
    case .bye: say("bye")
    }
}

let events = peer.events()
Task {
    for await event in events {
        switch event {
        case .stateChanged(let state): say("state \(state.rawValue)")
        case .iceConnectionStateChanged(let state): say("ice \(state.rawValue)")
        case .remoteStream(let stream) where stream.kind == .video:
            stream.appSink?.setSampleHandler { _ in say("frame \(ProcessInfo.processInfo.systemUptime)") }
        case .bandwidthChanged(let decision):
            say("bandwidth \(decision.targetKbps) \(decision.estimateKbps) \(decision.reason)")
        default: break
        }
    }
}

do { try await peer.start() } catch { fail("the peer did not start: \(error)") }

func text(_ base64: Substring) -> String? { Data(base64Encoded: String(base64)).map { String(decoding: $0, as: UTF8.self) } }

// Lines are read on a thread of their own (a blocking read must not hold one of the few
// cooperative threads) and applied in order by one task.
let (lines, feed) = AsyncStream.makeStream(of: String.self)
let reader = Thread {
    while let line = readLine() { feed.yield(line) }
    feed.finish()
}
reader.start()
let parent = getppid()
Task.detached {
    while getppid() == parent { try? await Task.sleep(for: .milliseconds(500)) }
    exit(2)
}
for await line in lines {
    let fields = line.split(separator: " ")
    guard let verb = fields.first else { continue }
    switch verb {
    case "offer": if fields.count == 2, let sdp = text(fields[1]) { await peer.receive(.offer(sdp: sdp)) }
    case "answer": if fields.count == 2, let sdp = text(fields[1]) { await peer.receive(.answer(sdp: sdp)) }
    case "candidate":
        if fields.count == 3, let mline = Int(fields[1]), let candidate = text(fields[2]) {
            await peer.receive(.candidate(mlineIndex: mline, mid: nil, candidate: candidate))
        }
    case "bye": await peer.close(); exit(0)
    default: fail("unknown message \(verb)")
    }
}
await peer.close()
exit(0)
