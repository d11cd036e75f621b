import ECV
import ECVPeer
import Foundation
import GLibCore

/// `ecv peer`: a headless peer on a PeerJS server (the SkyWay tutorial's app): prints its id,
/// lists peers, calls one or answers calls, records, exchanges data.
enum PeerCommand {
    static let usage = """
        ecv peer [options]       a peer on a PeerJS server (the SkyWay peer model)
          --server URL             the peer server, e.g. http://127.0.0.1:8080/peerjs (ecv serve with a peer key)
          --key KEY                the API key
          --domain DOMAIN          the domain the key is registered for (sent as Origin)
          --id ID                  this peer's id (default: the server's)
          --list                   print the peers on the server and exit
          --call ID                call this peer
          --answer                 answer incoming calls (the default without --call)
          --data TEXT              with --call: also open a data connection and send TEXT; always: print
                                   what connections bring and answer each text with "echo: TEXT"
          --serialization KIND     the data connection --data opens: binary (PeerJS's default, BinaryPack),
                                   json or raw (for clients without BinaryPack); answered ones take the caller's
          --record FILE            record each call (FILE, then FILE-2.ext, …): both directions, as sent
          --overwrite              replace an existing --record FILE
          --ice-server URL         ICE server (repeatable; default: none, host candidates only)
          --duration SEC           end after SEC seconds of media (default: until hung up or Ctrl-C)
          --json                   one JSON object per line instead of text, nothing else
        \(MediaOptions.help)
        \(LogOptions.help)
          Exits 1 when the peer server refuses, a --call brings no media, or a recording was not written.
        """

    static let spec = OptionSpec(values: ["server", "key", "domain", "id", "call", "data", "record", "duration", "ice-server", "serialization"],
                                 flags: ["json", "list", "answer", "overwrite"]) + MediaOptions.spec + LogOptions.spec

    static func run(_ words: [String]) async throws(CLIError) {
        var arguments = try Arguments(words, spec)
        try arguments.exclusive("list", "call", because: "--list prints the peers and exits")
        try arguments.exclusive("answer", "call")
        guard let server = arguments.value("server") else { throw .usage("give --server URL (the PeerJS server)") }
        guard let key = arguments.value("key") else { throw .usage("give --key KEY") }
        var options: PeerOption
        do { options = try PeerOption(key: key, serverURL: server, domain: arguments.value("domain")) } catch { throw .usage(error.description) }
        options.iceServers = arguments.values("ice-server").map { ICEServer(urls: [$0]) }
        let id = arguments.value("id"), list = arguments.flag("list"), target = arguments.value("call")
        let data = arguments.value("data"), recordPath = arguments.path("record"), duration = try arguments.positive("duration")
        let serialization = try Self.serialization(arguments.value("serialization"))
        if arguments.value("serialization") != nil && (data == nil || target == nil) { throw .usage("--serialization is for the data connection of --call ID --data TEXT") }
        let json = arguments.flag("json"), overwrite = arguments.flag("overwrite")
        _ = arguments.flag("answer")
        let parameters = try MediaOptions.parameters(&arguments)
        // The ICE options apply to the peer's connections (a peer has no ConnectParameters of its own).
        options.iceServers += parameters.iceServers
        options.iceTransportPolicy = parameters.iceTransportPolicy ?? .all
        let video = MediaOptions.video(&arguments, default: .testPattern(pattern: "smpte"))
        let audio = MediaOptions.audio(&arguments)
        let logging = try LogOptions.read(&arguments)
        try arguments.finish()
        if overwrite && recordPath == nil { throw .usage("--overwrite needs --record FILE") }
        let decisions = try MediaOptions.check(parameters, video: video, audio: audio)
        let record = try recordPath.map { path throws(CLIError) in
            // A peer call takes no allowlist (MediaConstraints has one codec): any codec may be negotiated.
            var unrestricted = parameters
            unrestricted.videoCodecs = []
            return try RecordingTarget.file(path, overwrite: overwrite, codecs: MediaOptions.negotiableCodecs(unrestricted))
        }
        let constraints = MediaConstraints(maxWidth: parameters.videoWidth, maxHeight: parameters.videoHeight,
                                           maxFrameRate: parameters.videoFps == 0 ? 30 : parameters.videoFps,
                                           videoFlag: parameters.videoCallEnabled, videoCodec: parameters.videoCodec,
                                           videoMaxBitrate: parameters.videoMaxBitrate, audioStartBitrate: parameters.audioStartBitrate,
                                           cameras: .cameras(front: video, back: .testPattern(pattern: "ball")), microphone: audio)
        let stream: ECVPeer.MediaStream
        do throws(PeerError) { stream = try Navigator.getUserMedia(constraints: constraints) } catch { throw .usage(error.description) }

        LogOptions.install(logging)
        for decision in decisions { Logger.info("media: \(decision)") }
        Interrupts.install()
        let out = PeerPrinter(json: json)
        let peer = Peer(id: id, options: options)
        let session = PeerSessionRun(peer: peer, stream: stream, record: record, duration: duration, out: out)
        let openedId = try await session.waitForOpen()
        out.event("open", ["id": openedId], text: "open \(openedId)")
        if list {
            let peers = await peer.listAllPeers()
            out.event("peers", ["peers": peers], text: peers.isEmpty ? "no peers listed (is discovery on for this key?)" : peers.joined(separator: "\n"))
            await peer.destroy()
            return
        }
        session.listen()
        if let target {
            session.follow(peer.call(peerId: target, stream: stream))
            if let data { session.follow(peer.connect(peerId: target, options: ConnectOption(serialization: serialization)), greeting: data) }
        }
        let outcome = await session.runUntilDone(calling: target != nil)
        await peer.destroy()
        out.event("summary", outcome.fields, text: outcome.text)
        if target != nil, outcome.streams == 0 { throw .failed("no media arrived from \(target ?? "")") }
        if let lost = outcome.lostRecordings.first { throw .failed("the recording \(lost)") }
    }
}

extension PeerCommand {
    /// `--serialization`: the three a PeerJS client can open (`binary-utf8` is `binary` on the wire
    /// today; `none` is an old name of `raw`).
    static func serialization(_ name: String?) throws(CLIError) -> PeerJSSerialization {
        guard let name else { return .binary }
        guard let kind = PeerJSSerialization(rawValue: name), [.binary, .json, .raw].contains(kind) else {
            throw .usage("--serialization \(name.prefix(40)): give binary, json or raw")
        }
        return kind
    }
}

/// Prints events as text or NDJSON.
struct PeerPrinter: Sendable {
    let json: Bool

    func event(_ name: String, _ fields: [String: any Sendable], text: String) {
        if json {
            var all = fields
            all["event"] = name
            NDJSON.emit(all)
        } else {
            say(text)
        }
    }
}
