import Foundation
import Soup
import Synchronization
import Testing

/// A raw TCP client on a POSIX socket (what a hostile client sends is not what HTTPClient sends).
/// Blocking calls run on a dispatch queue, never on the cooperative pool.
final class RawConnection: @unchecked Sendable { // `fd` is immutable; reads and writes happen on one queue
    let fd: Int32
    private let queue = DispatchQueue(label: "raw-connection")

    /// - Parameter source: the local address to connect from (any 127.x.y.z is this host's loopback).
    init(port: UInt16, from source: String? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else { close(fd); throw UnexpectedEnd(what: "bind to \(source) failed: \(errno)") }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { close(fd); throw UnexpectedEnd(what: "connect failed: \(errno)") }
    }

    deinit { close(fd) }

    func send(_ text: String) { send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Everything the server sends until it closes the connection or `seconds` pass; `closed`
    /// tells which.
    func readToEnd(seconds: Double) async -> (text: String, closed: Bool) {
        let fd = fd
        return await withCheckedContinuation { continuation in
            queue.async {
                var timeout = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1_000_000))
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                var received: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 65536)
                while true {
                    let count = recv(fd, &buffer, buffer.count, 0)
                    if count > 0 { received += buffer[0..<count]; continue }
                    let closed = count == 0 || errno == ECONNRESET
                    continuation.resume(returning: (String(decoding: received, as: UTF8.self), closed))
                    return
                }
            }
        }
    }
}

/// How many requests reached a handler.
final class HandledCount: Sendable {
    let value = Atomic<Int>(0)
}

struct UnexpectedEnd: Error, CustomStringConvertible {
    let what: String
    var description: String { what }
}

extension SoupTests {
    @Suite("Server limits and deadlines") struct ServerLimitsTests {
        static let limits = HTTPServerLimits(maxBodyBytes: 1024, maxURLBytes: 256, maxHeaderBytes: 1024,
                                             headerTimeout: .milliseconds(600), bodyTimeout: .milliseconds(600))

        /// A server with the test limits whose one route counts the requests that reached it.
        private func withLimitedServer(_ body: (UInt16, String, HandledCount) async throws -> Void) async throws {
            let handled = HandledCount()
            let server = HTTPServer(limits: Self.limits)
            server.route("*", "/") { request in
                handled.value.add(1, ordering: .relaxed)
                return .text("ok \(request.body.count)")
            }
            let port = try await server.listen()
            do {
                try await body(port, try #require(server.baseURL), handled)
            } catch {
                await server.stop()
                throw error
            }
            await server.stop()
        }

        @Test func oversizedRequestsGetAStatusBeforeAnyHandlerRuns() async throws {
            try await withLimitedServer { port, base, handled in
                let client = HTTPClient()
                let big = try await client.send(HTTPRequest(method: "POST", url: base + "/x", body: [UInt8](repeating: 97, count: 4096)))
                #expect(big.status == 413 && big.headers["Connection"] == "close")
                #expect(big.text?.contains("larger than 1024 bytes") == true)
                let longURL = try await client.get(base + "/" + String(repeating: "a", count: 400))
                #expect(longURL.status == 414)
                let bigHeaders = try await client.get(base + "/x", headers: ["X-Big": String(repeating: "b", count: 2000)])
                #expect(bigHeaders.status == 431)
                // A chunked body that grows past the limit is refused too.
                let raw = try RawConnection(port: port)
                raw.send("POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n")
                for _ in 0..<3 { raw.send("200\r\n" + String(repeating: "c", count: 512) + "\r\n") }
                raw.send("0\r\n\r\n")
                let answer = await raw.readToEnd(seconds: 5)
                #expect(answer.text.hasPrefix("HTTP/1.1 413"), "\(answer.text.prefix(80))")
                #expect(handled.value.load(ordering: .relaxed) == 0, "no handler saw a refused request")
                #expect(try await client.send(HTTPRequest(method: "POST", url: base + "/x", body: [1, 2, 3])).text == "ok 3")
            }
        }

        /// docs/protocol.md §0.1: a refused body is answered when the headers arrive, not after
        /// the body (which may never come): the client gets the status and the end of the
        /// connection well inside the body deadline, without sending a byte of the body.
        @Test(arguments: [("Content-Length: -1", 400), ("Content-Length: abc", 400), ("Content-Length: 1, 2", 400),
                          ("Content-Length: 99999999999999999999", 400), ("Content-Length: 5\r\nContent-Length: 6", 400),
                          ("Content-Length: 100000000", 413)])
        func aRefusedBodyIsAnsweredAtTheHeaders(_ header: String, _ status: Int) async throws {
            try await withLimitedServer { port, _, handled in
                let raw = try RawConnection(port: port)
                let sent = ContinuousClock.now
                raw.send("POST /x HTTP/1.1\r\nHost: h\r\n\(header)\r\n\r\n")
                let answer = await raw.readToEnd(seconds: 5)
                #expect(answer.text.hasPrefix("HTTP/1.1 \(status)"), "\(answer.text.prefix(80))")
                #expect(answer.closed)
                #expect(ContinuousClock.now - sent < Self.limits.bodyTimeout, "answered before the body deadline")
                #expect(handled.value.load(ordering: .relaxed) == 0)
            }
        }

        /// A chunked body that never ends is answered `413` as it passes the limit.
        @Test func aGrowingChunkedBodyIsAnsweredAsItPassesTheLimit() async throws {
            try await withLimitedServer { port, _, handled in
                let raw = try RawConnection(port: port)
                let sent = ContinuousClock.now
                raw.send("POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n")
                for _ in 0..<3 { raw.send("200\r\n" + String(repeating: "c", count: 512) + "\r\n") }
                let answer = await raw.readToEnd(seconds: 5)
                #expect(answer.text.hasPrefix("HTTP/1.1 413"), "\(answer.text.prefix(80))")
                #expect(answer.closed && ContinuousClock.now - sent < Self.limits.bodyTimeout)
                #expect(handled.value.load(ordering: .relaxed) == 0)
            }
        }

        @Test func aShortBodyIsCutOffAtTheBodyDeadline() async throws {
            try await withLimitedServer { port, _, handled in
                let raw = try RawConnection(port: port)
                raw.send("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\n{\"a\"")
                let answer = await raw.readToEnd(seconds: 5)
                #expect(answer.closed && answer.text.isEmpty)
                #expect(handled.value.load(ordering: .relaxed) == 0)
            }
        }

        /// Idle connections, slow-header senders (a header line at a time, never finishing) and
        /// finished keep-alive clients: all are closed by the server, its descriptors come back,
        /// and it answers others meanwhile.
        @Test func idleAndSlowConnectionsAreCutOffAndDescriptorsReturn() async throws {
            try await withLimitedServer { port, base, handled in
                let client = HTTPClient()
                _ = try await client.get(base + "/warm-up")
                try await Task.sleep(for: .milliseconds(200))
                let baseline = openFileDescriptorCount()
                do { // the clients' own descriptors close at the end of this block
                let idle = try (0..<100).map { _ in try RawConnection(port: port) }
                let slow = try (0..<100).map { _ in try RawConnection(port: port) }
                for connection in slow { connection.send("GET /x HTTP/1.1\r\nHost: h\r\n") }
                for _ in 0..<3 {
                    for connection in slow { connection.send("X-Drip: 1\r\n") }
                    try await Task.sleep(for: .milliseconds(150))
                }
                #expect(try await HTTPClient().get(base + "/health").status == 200, "still answering")
                for connection in idle + slow {
                    let end = await connection.readToEnd(seconds: 5)
                    #expect(end.closed && end.text.isEmpty)
                }
                }
                // Finished requests leave nothing behind either (no connection kept in CLOSE-WAIT).
                for index in 0..<10 { _ = try await HTTPClient().get(base + "/r\(index)") }
                var after = openFileDescriptorCount()
                for _ in 0..<50 where after > baseline + 4 {
                    try await Task.sleep(for: .milliseconds(100))
                    after = openFileDescriptorCount()
                }
                #expect(after <= baseline + 4, "fds \(baseline) → \(after)")
                #expect(handled.value.load(ordering: .relaxed) == 12)
            }
        }
    
        /// Issue #34: one client holding 1,224 idle connections against the common 1,024-descriptor
        /// limit failed half the health checks. Each address may keep a bounded number waiting.
        @Test func oneAddressHoldsABoundedNumberOfWaitingConnections() async throws {
            var limits = Self.limits
            limits.headerTimeout = .seconds(5)
            limits.maxWaitingConnectionsPerAddress = 5
            let server = HTTPServer(limits: limits)
            server.route("*", "/") { _ in .text("ok") }
            let port = try await server.listen()
            let held = try (0..<8).map { _ in try RawConnection(port: port) }
            // The first five wait for their headers; the rest are closed when accepted, unanswered.
            var closed = 0
            for connection in held.suffix(3) {
                let end = await connection.readToEnd(seconds: 2)
                if end.closed && end.text.isEmpty { closed += 1 }
            }
            #expect(closed == 3)
            let waiting = await held[0].readToEnd(seconds: 0.3)
            #expect(!waiting.closed, "a connection within the share is still waiting")
            // Another address is served meanwhile.
            let other = try RawConnection(port: port, from: "127.0.0.2")
            other.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(await other.readToEnd(seconds: 5).text.hasPrefix("HTTP/1.1 200"))
            // The address's own share frees as its connections go.
            for connection in held.prefix(5) { connection.send("GET /x HTTP/1.1\r\nHost: h\r\n\r\n") }
            for connection in held.prefix(5) { #expect(await connection.readToEnd(seconds: 5).text.hasPrefix("HTTP/1.1 200")) }
            let again = try RawConnection(port: port)
            again.send("GET /y HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(await again.readToEnd(seconds: 5).text.hasPrefix("HTTP/1.1 200"))
            await server.stop()
        }
    }
}
