import Foundation
import GLibCore
import GStreamer
import Synchronization

/// What `MediaParameters.tracing` turns on: GStreamer's latency tracer, with its records
/// written as NDJSON, and Graphviz dumps of the live pipeline at every state change.
///
/// Files go to `directory` (default `$ECV_TRACE_DIR` or the temporary directory's `ecvkit-trace`):
/// `<name>-latency.ndjson` and `<name>-<n>-<state>.dot`. A write that fails does not disturb the
/// pipeline; it is listed in `problems` (and the latency log stops at its first failure).
package final class GraphTracing: Sendable {
    package let directory: URL
    private let name: String
    private let latency: LatencyTracer.Observation
    private let states: BusObservation
    private let file: FileHandleBox
    private let failures: Locked<[String]>

    /// The trace writes that failed, in order.
    package var problems: [String] { failures.value }

    package init(pipeline: Pipeline, name: String, directory: URL? = nil) throws(MediaRuntimeError) {
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
        guard FileManager.default.createFile(atPath: logURL.path, contents: nil) else {
            throw .unavailable(control: "tracing", reason: "cannot create \(logURL.path)")
        }
        let handle: FileHandle
        do {
            handle = try FileHandle(forWritingTo: logURL)
        } catch {
            throw .unavailable(control: "tracing", reason: "cannot write \(logURL.path): \(error.localizedDescription)")
        }
        let failures = Locked<[String]>([])
        self.failures = failures
        let file = FileHandleBox(handle, path: logURL.path, failures: failures)
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
            do {
                try pipeline.dotDescription.write(to: url, atomically: true, encoding: .utf8)
            } catch {
                failures.withLock { $0.append("cannot write \(url.path): \(error.localizedDescription)") }
            }
        }
    }

    package static var defaultDirectory: URL {
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

/// A file handle written from streaming threads, serialised by a lock. The first write that
/// fails goes to `failures` and closes the file: later lines would leave a hole in it.
final class FileHandleBox: Sendable {
    // @unchecked Sendable: FileHandle is only touched inside `lock`.
    private struct Handle: @unchecked Sendable { let handle: FileHandle }
    private let lock: Mutex<Handle?>
    private let path: String
    private let failures: Locked<[String]>

    init(_ handle: FileHandle, path: String, failures: Locked<[String]>) {
        lock = Mutex(Handle(handle: handle))
        self.path = path
        self.failures = failures
    }

    func write(_ text: String) {
        lock.withLock { box in
            guard let handle = box?.handle else { return }
            do {
                try handle.write(contentsOf: Data(text.utf8))
            } catch {
                failures.withLock { $0.append("cannot write \(path), the latency log stops: \(error.localizedDescription)") }
                Self.close(&box)
            }
        }
    }

    func close() { lock.withLock { Self.close(&$0) } }

    private static func close(_ box: inout Handle?) {
        // Each line went to the kernel as it was written: a close that fails loses nothing of it.
        try? box?.handle.close()
        box = nil
    }
}
