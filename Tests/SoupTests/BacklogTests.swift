import Foundation
import GLibCore
import GStreamer
import Glibc
import Soup
import Testing

extension SoupTests {
    /// Forty callers dialling in the same second reach the server while its main loop is busy
    /// with other calls. The kernel must hold their connections until libsoup accepts them.
    @Suite("Listen backlog") struct BacklogTests {
        @Test func aBurstOfClientsIsHeldWhileTheLoopIsBusyAndThenServed() async throws {
            let clientCount = 100
            try await withServer({ server in
                server.route("GET", "/ping") { _ in .text("pong") }
            }) { server, _ in
                let port = try #require(server.port)
                let release = DispatchSemaphore(value: 0)
                MainLoop.shared.perform { _ = release.wait(timeout: .now() + 10) }
                defer { release.signal() }
                let clients = (0..<clientCount).map { _ in RawClient(port: port) }
                defer { clients.forEach { $0.close() } }
                // Handshakes complete in the kernel, without the (blocked) loop; with GSocket's default
                // backlog of 10 most SYNs are dropped and wait for a retransmission a second later.
                let established = clients.filter { $0.waitConnected(milliseconds: 500) }.count
                #expect(established == clientCount)
                for client in clients { client.send("GET /ping HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n") }
                release.signal()
                let answers = clients.map { $0.readAll(milliseconds: 10_000) }
                #expect(answers.filter { $0.hasPrefix("HTTP/1.1 200") && $0.hasSuffix("pong") }.count == clientCount,
                        "\(Set(answers.map { String($0.prefix(20)) }))")
            }
        }
    }
}

/// A non-blocking TCP client on 127.0.0.1, in plain POSIX calls so the test sees the kernel's view.
private final class RawClient: Sendable {
    let fd: Int32

    init(port: UInt16) { fd = startConnecting(to: port) }

    /// True once the handshake completed without error.
    func waitConnected(milliseconds: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        guard poll(&descriptor, 1, milliseconds) == 1 else { return false }
        var failure: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &length) == 0 && failure == 0
    }

    func send(_ text: String) {
        _ = text.utf8CString.withUnsafeBufferPointer { Glibc.send(fd, $0.baseAddress, $0.count - 1, Int32(MSG_NOSIGNAL)) }
    }

    /// Everything the server sends until it closes, or what arrived when the time is up.
    func readAll(milliseconds: Int32) -> String {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = ContinuousClock.now + .milliseconds(Int(milliseconds))
        while ContinuousClock.now < deadline {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 100) >= 0 else { break }
            let count = recv(fd, &buffer, buffer.count, 0)
            if count > 0 { received += buffer[0..<count] } else if count == 0 || errno != EAGAIN { break }
        }
        return String(decoding: received, as: UTF8.self)
    }

    func close() { Glibc.close(fd) }
}
