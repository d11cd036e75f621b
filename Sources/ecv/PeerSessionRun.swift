import ECV
import ECVPeer
import Foundation
import GLibCore

/// What `ecv peer` and `ecv demo --peer` count of a run.
struct PeerRunOutcome: Sendable {
    var calls = 0
    var streams = 0
    var framesReceived = 0
    var dataReceived = 0
    var recordings: [String] = []
    /// Recordings asked for and not written: "FILE was not written: why".
    var lostRecordings: [String] = []
    var errors: [String] = []

    var fields: [String: any Sendable] {
        ["calls": calls, "streams": streams, "framesReceived": framesReceived, "dataReceived": dataReceived,
         "recordings": recordings, "lostRecordings": lostRecordings, "errors": errors]
    }

    var text: String {
        "calls \(calls), remote streams \(streams), frames received \(framesReceived), data messages \(dataReceived)"
            + (recordings.isEmpty ? "" : ", recorded " + recordings.joined(separator: ", "))
            + (lostRecordings.isEmpty ? "" : "; NOT recorded: " + lostRecordings.joined(separator: "; "))
            + (errors.isEmpty ? "" : "; errors: " + errors.joined(separator: "; "))
    }
}

/// One peer's run on the command line: answers calls, follows connections, records, and ends
/// after the duration, when the last call closed, or on Ctrl-C.
final class PeerSessionRun: Sendable {
    let peer: Peer
    let stream: ECVPeer.MediaStream
    let record: RecordingTarget?
    let duration: Double?
    let out: PeerPrinter
    private let outcome = Locked(PeerRunOutcome())
    private let remoteStreams = Locked<[ECVPeer.MediaStream]>([])
    private let live = Locked(0)
    private let firstMedia = OneShot<Void, Never>()
    private let allClosed = OneShot<Void, Never>()

    init(peer: Peer, stream: ECVPeer.MediaStream, record: RecordingTarget?, duration: Double?, out: PeerPrinter) {
        self.peer = peer
        self.stream = stream
        self.record = record
        self.duration = duration
        self.out = out
    }

    /// The id once OPEN came; the peer's ERROR as the failure.
    func waitForOpen() async throws(CLIError) -> String {
        for await event in peer.events() {
            switch event {
            case .open(let id): return id
            case .error(let error): throw .failed("the peer server refused: \(error)")
            default: continue
            }
        }
        throw .failed("the peer closed before OPEN")
    }

    /// Answers every incoming call and takes every data connection.
    func listen() {
        let events = peer.events()
        Task {
            for await event in events {
                switch event {
                case .call(let call):
                    out.event("call", ["from": call.peer, "connectionId": call.connectionId], text: "call from \(call.peer)")
                    follow(call)
                    call.answer(stream: stream)
                case .connection(let connection):
                    out.event("connection", ["from": connection.peer, "label": connection.label, "serialization": connection.serialization.rawValue],
                              text: "data connection from \(connection.peer) (\(connection.serialization.rawValue))")
                    follow(connection, greeting: nil)
                case .error(let error):
                    outcome.withLock { $0.errors.append(error.description) }
                    out.event("error", ["kind": error.kind.rawValue, "message": error.message], text: "error: \(error)")
                case .close(let other):
                    out.event("close", ["peer": other], text: "connections with \(other) closed")
                case .disconnected(let id):
                    out.event("disconnected", ["id": id], text: "disconnected from the server")
                case .open:
                    break
                }
            }
        }
    }

    func follow(_ call: MediaConnection) {
        let index = outcome.withLock { $0.calls += 1; return $0.calls }
        live.withLock { $0 += 1 }
        let events = call.events()
        let record = self.record.map { index == 1 ? $0 : $0.at(Self.numbered($0.path, index)) }
        Task {
            for await event in events {
                switch event {
                case .stream(let remote):
                    remoteStreams.withLock { $0.append(remote) }
                    outcome.withLock { $0.streams += 1 }
                    out.event("stream", ["peer": call.peer, "video": remote.videoTrackCount, "audio": remote.audioTrackCount],
                              text: "stream from \(call.peer)")
                    if let record {
                        do throws(CLIError) { try record.clearOldFile() } catch {
                            outcome.withLock { $0.lostRecordings.append("\(record.path) was not written: \(error)") }
                        }
                        do throws(PeerError) {
                            try await call.startRecording(to: URL(fileURLWithPath: record.path), format: record.format)
                            outcome.withLock { $0.recordings.append(record.path) }
                            out.event("recording", ["file": record.path], text: "recording to \(record.path)")
                        } catch {
                            outcome.withLock { $0.errors.append(error.description); $0.lostRecordings.append("\(record.path) was not written: \(error.message)") }
                            out.event("error", ["kind": error.kind.rawValue, "message": error.message], text: "error: \(error)")
                        }
                    }
                    _ = firstMedia.resolve(.success(()))
                case .error(let error):
                    outcome.withLock { $0.errors.append(error.description) }
                    out.event("error", ["peer": call.peer, "kind": error.kind.rawValue, "message": error.message], text: "call error: \(error)")
                case .close:
                    out.event("call-closed", ["peer": call.peer], text: "call with \(call.peer) closed")
                    if live.withLock({ $0 -= 1; return $0 }) == 0 { _ = allClosed.resolve(.success(())) }
                }
            }
        }
    }

    func follow(_ connection: DataConnection, greeting: String?) {
        let events = connection.events()
        Task {
            for await event in events {
                switch event {
                case .open:
                    out.event("data-open", ["peer": connection.peer], text: "data connection with \(connection.peer) open")
                    if let greeting { try? connection.send(greeting) } // refused only when closed meanwhile, reported by its events
                case .data(let message):
                    outcome.withLock { $0.dataReceived += 1 }
                    switch message {
                    case .text(let text):
                        out.event("data", ["peer": connection.peer, "text": text], text: "data from \(connection.peer): \(text)")
                        if !text.hasPrefix("echo: ") { try? connection.send("echo: " + text) } // refused only when closed meanwhile
                    case .binary(let bytes):
                        out.event("data", ["peer": connection.peer, "bytes": bytes.count], text: "data from \(connection.peer): \(bytes.count) bytes")
                    }
                case .error(let error):
                    out.event("error", ["peer": connection.peer, "kind": error.kind.rawValue, "message": error.message], text: "data error: \(error)")
                case .close:
                    out.event("data-closed", ["peer": connection.peer], text: "data connection with \(connection.peer) closed")
                }
            }
        }
    }

    /// Until the duration after the first media, the last call closing (when calling), or Ctrl-C.
    func runUntilDone(calling: Bool) async -> PeerRunOutcome {
        let done = OneShot<Void, Never>()
        var waiters = [Task { await Interrupts.wait(); _ = done.resolve(.success(())) }]
        if let duration {
            waiters.append(Task { [firstMedia] in
                await firstMedia.value()
                do { try await Task.sleep(for: .milliseconds(Int(duration * 1000))) } catch { return } // cancelled: the run ended another way
                _ = done.resolve(.success(()))
            })
        }
        if calling { waiters.append(Task { [allClosed] in await allClosed.value(); _ = done.resolve(.success(())) }) }
        await done.value()
        waiters.forEach { $0.cancel() }
        for call in peer.mediaConnections { await call.closeAndWait() }
        let frames = remoteStreams.withLock { $0.reduce(0) { $0 + $1.videoFrameCount } }
        // Closed: every recording is finalised; one that left no file was not written.
        let unwritten = outcome.value.recordings.filter { !(record?.at($0).written ?? true) }
        return outcome.withLock { outcome in
            outcome.framesReceived = frames
            outcome.recordings.removeAll { unwritten.contains($0) }
            outcome.lostRecordings += unwritten.map { "\($0) was not written: nothing was written" }
            return outcome
        }
    }

    static func numbered(_ path: String, _ index: Int) -> String {
        let url = URL(fileURLWithPath: path)
        let ext = url.pathExtension
        return url.deletingPathExtension().path + "-\(index)" + (ext.isEmpty ? "" : "." + ext)
    }
}
