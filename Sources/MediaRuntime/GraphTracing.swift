import Foundation
import GStreamer
import Synchronization

/// What `ConnectParameters.tracing` turns on: GStreamer's latency tracer, with its records
/// written as NDJSON, and Graphviz dumps of the live pipeline at every state change.
///
/// Files go to `directory` (default `$ECV_TRACE_DIR` or the temporary directory's `ecvkit-trace`):
/// `<name>-latency.ndjson` and `<name>-<n>-<state>.dot`.
public final class GraphTracing: Sendable {
    public let directory: URL
    private let name: String
    private let latency: LatencyTracer.Observation
    private let states: BusObservation
    private let file: FileHandleBox

    public init(pipeline: Pipeline, name: String, directory: URL? = nil) throws(MediaRuntimeError) {
        let directory = directory ?? Self.defaultDirectory
        self.directory = directory
        self.name = name
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw .unavailable(control: "tracing", reason: "cannot create \(directory.path): \(error.localizedDescription)")
        }
        do throws(GStreamerError) {
            try LatencyTracer.enable(flags: "element+pipeline")
        } catch {
            throw .gstreamer(error)
        }
        let logURL = directory.appendingPathComponent("\(name)-latency.ndjson")
        guard FileManager.default.createFile(atPath: logURL.path, contents: nil),
              let handle = try? FileHandle(forWritingTo: logURL) else {
            throw .unavailable(control: "tracing", reason: "cannot write \(logURL.path)")
        }
        let file = FileHandleBox(handle)
        self.file = file
        latency = LatencyTracer.observe { record in
            let line = "{\"kind\":\"\(record.kind)\",\"element\":\"\(record.element)\",\"sink\":\"\(record.sinkElement ?? "")\","
                + "\"time_ns\":\(record.time),\"ts_ns\":\(record.timestamp)}\n"
            file.write(line)
        }
        let dumps = Mutex(0)
        states = pipeline.observeMessages { [weak pipeline] message in
            guard case .stateChanged(_, _, let new, _, true) = message, let pipeline else { return }
            let index = dumps.withLock { $0 += 1; return $0 }
            let url = directory.appendingPathComponent("\(name)-\(index)-\(new).dot")
            try? pipeline.dotDescription.write(to: url, atomically: true, encoding: .utf8)
        }
    }

    public static var defaultDirectory: URL {
        if let path = ProcessInfo.processInfo.environment["ECV_TRACE_DIR"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        return FileManager.default.temporaryDirectory.appendingPathComponent("ecvkit-trace")
    }

    deinit {
        latency.cancel()
        states.cancel()
        file.close()
    }
}

/// A file handle written from streaming threads, serialised by a lock.
final class FileHandleBox: Sendable {
    // @unchecked Sendable: FileHandle is only touched inside `lock`.
    private struct Handle: @unchecked Sendable { let handle: FileHandle }
    private let lock: Mutex<Handle?>
    init(_ handle: FileHandle) { lock = Mutex(Handle(handle: handle)) }
    func write(_ text: String) {
        lock.withLock { $0?.handle.write(Data(text.utf8)) }
    }
    func close() {
        lock.withLock { box in
            try? box?.handle.close()
            box = nil
        }
    }
}
