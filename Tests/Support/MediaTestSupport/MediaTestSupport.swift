import Foundation
import GLibCore
import GStreamer
import MediaPipeline

/// Helpers the test targets share: colours of frames, polling and timeouts with a bound, and
/// process resource counts from /proc.

package struct TestFailure: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// Mean red, green and blue of an RGBA frame (0…255), sampling every 7th pixel.
package func meanColor(_ frame: VideoFrame) -> (red: Double, green: Double, blue: Double) {
    var sums = (0.0, 0.0, 0.0), count = 0.0
    let stride = frame.info.strides.first ?? frame.width * 4
    for y in Swift.stride(from: 0, to: frame.height, by: 7) {
        for x in Swift.stride(from: 0, to: frame.width, by: 7) {
            let offset = y * stride + x * 4
            guard offset + 2 < frame.data.count else { continue }
            sums.0 += Double(frame.data[offset]); sums.1 += Double(frame.data[offset + 1]); sums.2 += Double(frame.data[offset + 2])
            count += 1
        }
    }
    return count > 0 ? (sums.0 / count, sums.1 / count, sums.2 / count) : (0, 0, 0)
}

/// Mean red, green and blue of a rectangle of an RGBA frame (0…255), every pixel.
package func meanColor(_ frame: VideoFrame, x: Int, y: Int, width: Int, height: Int) -> (red: Double, green: Double, blue: Double) {
    var sums = (0.0, 0.0, 0.0), count = 0.0
    let stride = frame.info.strides.first ?? frame.width * 4
    for row in y..<min(y + height, frame.height) {
        for column in x..<min(x + width, frame.width) {
            let offset = row * stride + column * 4
            sums.0 += Double(frame.data[offset]); sums.1 += Double(frame.data[offset + 1]); sums.2 += Double(frame.data[offset + 2])
            count += 1
        }
    }
    return count > 0 ? (sums.0 / count, sums.1 / count, sums.2 / count) : (0, 0, 0)
}

/// Resident memory of this process (VmRSS in /proc/self/status), in bytes; 0 when unreadable.
package func residentMemoryBytes() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
    return (Int(line?.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "") ?? 0) << 10
}

/// Polls `condition` until it holds or `timeout` passes (then throws naming `what`).
package func eventually(_ timeout: Duration = .seconds(10), _ what: String, _ condition: @Sendable () async -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if await condition() { return }
        try await Task.sleep(for: .milliseconds(50))
    }
    throw TestFailure("not true within \(timeout): \(what)")
}

/// Threads of this process, from /proc.
package func processThreadCount() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("Threads:") }
    return Int(line?.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? -1
}

/// Open file descriptors of this process, from /proc.
package func openFileDescriptorCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
}

/// Fails the test instead of hanging it when `body` does not finish in `seconds`.
package struct TimedOut: Error, CustomStringConvertible {
    package let what: String
    package init(what: String) { self.what = what }
    package var description: String { "timed out: \(what)" }
}

package func within<T: Sendable>(_ seconds: Double, _ what: String = "operation",
                                _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        guard let first = try await group.next(), let value = first else {
            group.cancelAll()
            throw TimedOut(what: what)
        }
        group.cancelAll()
        return value
    }
}

/// Decodes `url` through `decoder` (e.g. "matroskademux ! vp8dec") to RGBA and returns its last
/// frame, or the first at or after `time` seconds.
package func decodeFrame(of url: URL, with decoder: String, at time: Double? = nil) async throws -> VideoFrame {
    let pipeline = try Pipeline(launch: "filesrc location=\(url.path) ! \(decoder) ! videoconvert ! video/x-raw,format=RGBA ! appsink name=sink sync=false")
    guard let element = pipeline.element(named: "sink") else { throw TestFailure("the decode pipeline has no sink") }
    let sink = try AppSink(element)
    let last = Locked<VideoFrame?>(nil)
    sink.setSampleHandler { sample in
        last.withLock { last in
            if let time, let kept = last?.pts, Double(kept) / 1e9 >= time { return }
            last = sample.videoFrame()
        }
    }
    try await pipeline.play()
    try await pipeline.waitForEndOfStream()
    pipeline.stop()
    guard let frame = last.value else { throw TestFailure("no frame decoded from \(url.lastPathComponent)") }
    return frame
}

/// A count bumped from any thread (a pad probe's streaming thread) and read by a test.
package final class Counter: Sendable {
    private let value = Locked(0)
    package init() {}
    package func increment() { value.withLock { $0 += 1 } }
    package func reset() { value.withLock { $0 = 0 } }
    package var count: Int { value.value }
}

/// A loopback port nobody uses now (the kernel's pick for a socket bound to port 0), for TCP or UDP.
package func freeLocalPort(udp: Bool = false) throws -> Int {
    let fd = socket(AF_INET, Int32(udp ? SOCK_DGRAM.rawValue : SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestFailure("no socket for finding a free port") }
    defer { close(fd) }
    var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: 0, sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")), sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw TestFailure("no free port") }
    return Int(UInt16(bigEndian: address.sin_port))
}
