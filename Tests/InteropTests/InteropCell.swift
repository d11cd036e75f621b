import Foundation
import MediaPipeline
import MediaRuntime
import MediaTestSupport
import Testing

/// The interop matrix: ECVKit against real foreign WebRTC stacks (Chromium through the service's
/// browser page, aiortc), one cell at a time: the cells share two cores with a browser each.
@Suite(.serialized) struct InteropTests {}

/// One interop case: which foreign stack, which side of the call it plays, whether it offers
/// (it joins the room first) or answers (ECVKit's side joins first), the video codec both prefer,
/// and the label the foreign peer gives the text channel when it opens it.
struct InteropCell: Sendable, CustomTestStringConvertible {
    enum Peer: String, Sendable { case chromium, aiortc }
    /// The foreign peer's side: the caller (ECVKit's agent bot answers) or the agent's media end
    /// (an ECVKit caller dials).
    enum Role: String, Sendable { case caller, agent }

    var peer: Peer
    var role: Role
    var foreignOffers: Bool
    var codec: String
    var label = "textchannel"
    /// ECVKit's preferred codec when it differs from the foreign peer's (nil: the same).
    var ecvkitCodec: String?
    /// The foreign peer may use `codec` only (Chromium: `setCodecPreferences` with that codec and
    /// RTX alone), so ECVKit must fall back to it whoever offers.
    var foreignOnly = false
    /// ECVKit's side protects its video with RED/ULPFEC (`LossRecovery.forwardErrorCorrection`),
    /// which Chromium offers and accepts.
    var fec = false

    var name: String {
        "\(peer.rawValue)/\(role == .caller ? "caller" : "agent-side")/\(foreignOffers ? "offerer" : "answerer")/\(codec)"
            + (foreignOnly ? "-only" : "") + (ecvkitCodec.map { "/ecvkit=\($0)" } ?? "") + (fec ? "/fec" : "")
            + (label == "textchannel" ? "" : "/label=\(label)")
    }

    /// The codec ECVKit's side prefers.
    var ecvkitPreference: String { ecvkitCodec ?? codec }

    /// The codec the call must carry both ways: the offerer's preference when the answerer can
    /// handle it (every end here handles every codec, unless `foreignOnly`).
    var expectedCodec: String { foreignOnly || foreignOffers ? codec : ecvkitPreference }
    /// What the foreign peer sends: `expectedCodec`, except that Chromium limited by
    /// `setCodecPreferences` answers with its one codec yet sends with the offer's first (its
    /// preferences shape what it receives), which ECVKit then receives.
    var expectedForeignSent: String { foreignOnly && !foreignOffers && peer == .chromium ? ecvkitPreference : expectedCodec }

    /// Chromium limited to one codec against ECVKit preferring another, in each role (who offers
    /// alternates), and aiortc preferring H.264 against ECVKit preferring VP8, each side offering.
    static func mixedPreferences(_ peer: Peer, role: Role) -> [InteropCell] {
        switch peer {
        case .chromium:
            [("VP8", "H264", true), ("VP9", "VP8", false), ("H264", "VP9", role == .caller)].map {
                InteropCell(peer: peer, role: role, foreignOffers: $0.2, codec: $0.0, ecvkitCodec: $0.1, foreignOnly: true)
            }
        case .aiortc:
            [true, false].map { InteropCell(peer: peer, role: role, foreignOffers: $0, codec: "H264", ecvkitCodec: "VP8") }
        }
    }
    var testDescription: String { name }

    /// ECVKit with video FEC against Chromium, which offers RED/ULPFEC (ECVKit answers) and answers
    /// ECVKit's.
    static func forwardErrorCorrection(role: Role) -> [InteropCell] {
        [true, false].map { InteropCell(peer: .chromium, role: role, foreignOffers: $0, codec: "VP8", fec: true) }
    }

    /// `rtpmap` payload types per encoding name ("red", "ulpfec", "VP8") in one SDP digest's video section.
    static func videoPayloadTypes(_ lines: [String]) -> [String: Set<Int>] {
        var types: [String: Set<Int>] = [:]
        var inVideo = false
        for line in lines {
            if line.hasPrefix("m=") { inVideo = line.hasPrefix("m=video") }
            guard inVideo, line.hasPrefix("a=rtpmap:") else { continue }
            let fields = line.dropFirst("a=rtpmap:".count).split(separator: " ")
            guard fields.count == 2, let type = Int(fields[0]), let name = fields[1].split(separator: "/").first else { continue }
            types[String(name), default: []].insert(type)
        }
        return types
    }

    /// What is wrong with the FEC the two ends agreed on, as the foreign peer's digests show it:
    /// the answer must carry `red` and `ulpfec` under payload types the offer gave them.
    func fecProblems(localSDP: [String], remoteSDP: [String]) -> [String] {
        guard fec else { return [] }
        // The foreign peer's local description is the offer when it offers.
        let (offer, answer) = foreignOffers ? (localSDP, remoteSDP) : (remoteSDP, localSDP)
        let offered = Self.videoPayloadTypes(offer), answered = Self.videoPayloadTypes(answer)
        return ["red", "ulpfec"].compactMap { name in
            guard let types = answered[name], !types.isEmpty else { return "the answer has no \(name) for video: \(answer)" }
            return types.isSubset(of: offered[name] ?? []) ? nil : "the answer's \(name) \(types) is not the offer's \(offered[name] ?? [])"
        }
    }

    /// Seconds of media the foreign peer plays after its text channel opened: enough for the
    /// scripted commands, short enough for the whole matrix to run in a few minutes on two cores.
    var durationSeconds: Double { 5.5 }
    static let fps = 30.0
    static let opusFramesPerSecond = 50.0

    static func all(_ peer: Peer, role: Role) -> [InteropCell] {
        let codecs = peer == .chromium ? ["VP8", "VP9", "H264"] : ["VP8", "H264"]
        return [true, false].flatMap { offers in codecs.map { InteropCell(peer: peer, role: role, foreignOffers: offers, codec: $0) } }
    }

    /// Where ECVKit's side records this cell (replaced on every run, kept afterwards to look at).
    var recordingFile: URL {
        let name = "ecv-interop-" + name.replacingOccurrences(of: "/", with: "-").replacingOccurrences(of: "=", with: "-") + ".mkv"
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(name)
        try? FileManager.default.removeItem(at: url)
        return url
    }

    /// The foreign peer's command line for room `room` on the service at `base`, with its scripted
    /// data-channel texts and mutes (seconds after its channel opened).
    func peerProcess(base: String, room: String, token: String?, sends: [(Double, String)], mutes: [(Double, String)]) throws -> ForeignPeer {
        let timing = ["--duration", String(durationSeconds)]
        let script = sends.flatMap { ["--send", "\($0.0):\($0.1)"] } + mutes.flatMap { ["--mute", "\($0.0):\($0.1)"] }
        switch peer {
        case .chromium:
            var page = URLComponents(string: base + "/r/" + room)
            page?.queryItems = [URLQueryItem(name: "role", value: role.rawValue), URLQueryItem(name: "codec", value: codec)]
                + (foreignOnly ? [URLQueryItem(name: "only", value: "1")] : []) + [
                                URLQueryItem(name: "label", value: label), URLQueryItem(name: "watch", value: "keyframes")]
                + (token.map { [URLQueryItem(name: "token", value: $0)] } ?? [])
            guard let url = page?.string else { throw TestFailure("no page URL from \(base) and room \(room)") }
            return try ForeignPeer(script: "chromium_peer.py", arguments: ["--page", url] + timing + script, name: name)
        case .aiortc:
            return try ForeignPeer(script: "aiortc_peer.py",
                                   arguments: ["--url", base, "--room", room, "--role", role.rawValue, "--codec", codec,
                                               "--label", label] + (token.map { ["--token", $0] } ?? []) + timing + script,
                                   name: name)
        }
    }
}

/// Counts checked in one cell, for the line it prints.
struct CellReport {
    var cell: InteropCell
    var foreign: ForeignSummary?
    var ecvkitRendered = 0
    var commandsReached = 0
    var commandsExpected = 0
    var recording: RecordingCheck?
    /// When ECVKit's recording started (seconds since 1970), to place the key-frame requests.
    var recordingStartedAt: Double?

    var line: String {
        let peerName = cell.peer == .chromium ? "browser" : "aiortc"
        var parts = ["interop \(cell.name):"]
        if let foreign {
            parts.append("\(peerName) decoded \(foreign.framesDecoded) frames (\(foreign.videoCodecIn ?? "?")), sent \(foreign.framesSent)"
                         + " (\(foreign.videoCodecOut ?? "?")), audio in \(foreign.audioReceived)"
                         + (cell.peer == .chromium ? ", PLI/FIR sent \(foreign.pliSent)/\(foreign.firSent) received \(foreign.pliReceived)/\(foreign.firReceived);" : ";"))
        } else {
            parts.append("\(peerName) gave no summary;")
        }
        parts.append("ECVKit rendered \(ecvkitRendered); commands \(commandsReached)/\(commandsExpected);")
        parts.append(recording?.description ?? "no recording")
        if let recording {
            let short = recording.problems(remoteVideoFps: foreignVideoFps, bars: .issue)
            parts.append(short.isEmpty ? "; meets issue #11's recording bars" : "; short of issue #11's bars: " + short.joined(separator: "; "))
        }
        if let start = recordingStartedAt, let requests = foreign?.keyframeRequests {
            let relative = requests.map { String(format: "%+.2f", $0 - start) }
            parts.append("; key-frame requests at \(relative.isEmpty ? "none" : relative.joined(separator: ", ")) s from the recording's start")
        }
        return parts.joined(separator: " ")
    }
}

extension CellReport {
    /// Media both ways, by the foreign peer's own counters and ECVKit's renderer: more than 70 % of
    /// the frames (ECVKit sends 30 a second; the foreign peer what its stats say it sent) and of the
    /// audio packets (50 a second) its media time calls for.
    func mediaProblems(foreignSide: String, ecvkitSide: String) -> [String] {
        guard let summary = foreign else { return ["no summary from the foreign peer"] }
        var problems: [String] = []
        let expectedFrames = InteropCell.fps * summary.mediaSeconds
        if !summary.ok || !summary.errors.isEmpty { problems.append("the foreign peer reported: ok=\(summary.ok) \(summary.errors)") }
        if Double(summary.framesDecoded) < 0.7 * expectedFrames {
            problems.append("the foreign \(foreignSide) decoded \(summary.framesDecoded) of ~\(Int(expectedFrames)) frames")
        }
        if Double(summary.audioReceived) < 0.7 * InteropCell.opusFramesPerSecond * summary.mediaSeconds {
            problems.append("the foreign \(foreignSide) received \(summary.audioReceived) audio packets/frames in \(summary.mediaSeconds) s")
        }
        for (direction, codec, expected) in [("received", summary.videoCodecIn, cell.expectedCodec), ("sent", summary.videoCodecOut, cell.expectedForeignSent)]
        where codec?.lowercased() != "video/" + expected.lowercased() {
            problems.append("the foreign \(foreignSide) \(direction) video as \(codec ?? "nothing"), not \(expected)")
        }
        // What the foreign peer really sent: a browser short of CPU sends fewer than 30 a second.
        let expectedAtECVKit = min(expectedFrames, Double(summary.framesSent))
        if Double(ecvkitRendered) < 0.7 * expectedAtECVKit {
            problems.append("ECVKit's \(ecvkitSide) rendered \(ecvkitRendered) of ~\(Int(expectedAtECVKit)) frames from the foreign \(foreignSide)")
        }
        return problems
    }

    /// Reads ECVKit's recording back and keeps it for the line; what is wrong with it.
    mutating func checkRecording(_ recorded: RecordingSummary?) async throws -> [String] {
        guard let recorded else { return ["the recording gave no summary"] }
        let check = try await RecordingCheck.inspect(recorded)
        recording = check
        let quoted = RecordingCheck.quotedTitles(RecordingCheck.partyTitles, in: try Data(contentsOf: recorded.url))
        return check.problems(remoteVideoFps: foreignVideoFps) + (quoted.isEmpty ? [] : ["titles left quoted in the file: \(quoted)"])
    }

    /// The frame rate the foreign peer really sent (a browser short of CPU sends fewer).
    var foreignVideoFps: Double { foreign.map { Double($0.framesSent) / max($0.mediaSeconds, 1) } ?? InteropCell.fps }

    /// Prints the cell's line and, when something fell short, the evidence; records each problem as an issue.
    func conclude(_ problems: [String], progress: [String]) {
        print(line)
        for problem in problems { Issue.record(Comment(rawValue: "\(cell.name): \(problem)")) }
        if !problems.isEmpty, let foreign {
            print("interop \(cell.name) evidence:\n\(foreign.evidence)\nprogress:\n\(progress.suffix(30).joined(separator: "\n"))")
        }
    }

    /// A cell that threw: prints its line with what the foreign peer reported so far, and records
    /// the error with the peer's transcript and the ECVKit caller's events.
    mutating func concludeInterrupted(by error: any Error, foreign peer: ForeignPeer?, callerEvents: [String]) async {
        foreign = await peer?.interruptedSummary(peer: cell.peer)
        print(line)
        if let evidence = foreign?.evidence { print("interop \(cell.name) evidence:\n\(evidence)") }
        Issue.record(Comment(rawValue: "\(cell.name): \(error)\n\(peer?.transcript ?? "")\ncaller events: \(callerEvents)"))
    }
}
