import ECVProtocol
import ECVService
import Foundation
import Soup
import Testing

/// A blocking TCP client on a POSIX socket: hostile clients send what HTTPClient never would.
/// Its reads run on a dispatch queue, never on the cooperative pool.
final class HostileClient: Sendable {
    let fd: Int32
    private let queue = DispatchQueue(label: "hostile-client")

    /// - Parameter sendTimeout: seconds a blocked write waits before it gives up (nil: for ever).
    init(port: UInt16, sendTimeout: Int? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if let sendTimeout {
            var timeout = timeval(tv_sec: sendTimeout, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw UnexpectedFrame(description: "connect failed: errno \(errno)")
        }
    }

    deinit { close(fd) }

    func send(_ text: String) {
        _ = Array(text.utf8).withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// What the server sends until it closes the connection (`closed`) or `seconds` pass.
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
                    continuation.resume(returning: (String(decoding: received, as: UTF8.self), count == 0 || errno == ECONNRESET))
                    return
                }
            }
        }
    }
}

/// Enough descriptors for a few hundred connections at both ends in one process.
func raiseDescriptorLimit(to wanted: rlim_t) {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < wanted else { return }
    limit.rlim_cur = min(wanted, limit.rlim_max)
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}

extension ServiceTests {
    /// The issue's "file descriptors run out" and "idle and half-sent connections never timed out",
    /// as correctness (latency is Benchmarks/connections/hold_connections.py's business).
    @Suite("Hostile connections") struct HostileConnectionsTests {
        @Test func heldIdleAndSlowHeaderConnectionsLeaveTheServiceAnsweringAndTheirDescriptorsReturn() async throws {
            raiseDescriptorLimit(to: 4096)
            // One address holds them all here: its share (maxWaitingConnectionsPerAddress, 256) is lifted.
            let test = try await TestService.start {
                $0.limits.headerTimeout = .seconds(2)
                $0.limits.maxWaitingConnectionsPerAddress = 1000
            }
            let port = UInt16(try #require(URLComponents(string: test.base)?.port))
            #expect(try await test.get(ECVAPI.queues).status == 200) // warm-up
            let baseline = openFileDescriptorCount()
            do { // the clients' descriptors close at the end of this block
                let idle = try (0..<300).map { _ in try HostileClient(port: port) }
                let slow = try (0..<300).map { _ in try HostileClient(port: port) }
                for client in slow { client.send("GET /api/Queues HTTP/1.1\r\nHost: h\r\n") }
                for round in 0..<3 {
                    // A slowloris: one more header line now and then, never the blank line.
                    for client in slow { client.send("X-Drip-\(round): 1\r\n") }
                    let health = try await test.get(ECVAPI.queues)
                    #expect(health.status == 200, "a health check is answered while 600 connections are held")
                    try await Task.sleep(for: .milliseconds(150))
                }
                #expect(openFileDescriptorCount() >= baseline + 600, "the service holds them (until their deadline)")
                // Cut at the header deadline, without an answer.
                for client in idle + slow {
                    let end = await client.readToEnd(seconds: 8)
                    #expect(end.closed && end.text.isEmpty, "\(end.text.prefix(60))")
                }
            }
            var after = openFileDescriptorCount()
            for _ in 0..<100 where after > baseline + 4 {
                try await Task.sleep(for: .milliseconds(50))
                after = openFileDescriptorCount()
            }
            #expect(after <= baseline + 4, "descriptors \(baseline) → \(after)")
            #expect(try await test.get(ECVAPI.queues).status == 200)
            await test.stop()
        }

        /// Issue #34: a service at a 1,024 soft limit ran out of descriptors while its hard limit
        /// allowed far more. It raises its soft limit to the hard one when it starts, and logs it.
        @Test func theServiceRaisesItsDescriptorLimitAtStart() async throws {
            var limit = rlimit()
            #expect(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0)
            let hard = limit.rlim_max
            limit.rlim_cur = hard - 1 // a step below, so no test running meanwhile runs short
            #expect(setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0)
            let test = try await TestService.start()
            #expect(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0)
            #expect(limit.rlim_cur == hard)
            #expect(test.service.log.entries.contains { $0.category == .lifecycle && $0.message.hasPrefix("descriptor limit \(hard) (raised from \(hard - 1))") })
            await test.stop()
        }

        /// The issue's "keep-alive connections in CLOSE-WAIT": a client that asks to keep its
        /// connection gets `Connection: close` and the service closes its side after answering, so
        /// no descriptor waits for a client that went quiet.
        @Test func everyAnswerClosesTheConnectionSoNoneLingersInCloseWait() async throws {
            let test = try await TestService.start()
            let port = UInt16(try #require(URLComponents(string: test.base)?.port))
            _ = try await test.get(ECVAPI.queues)
            let baseline = openFileDescriptorCount()
            do {
                let clients = try (0..<50).map { _ in try HostileClient(port: port) }
                for client in clients { client.send("GET /api/Queues HTTP/1.1\r\nHost: h\r\nConnection: keep-alive\r\n\r\n") }
                for client in clients {
                    let answer = await client.readToEnd(seconds: 5)
                    #expect(answer.text.hasPrefix("HTTP/1.1 200") && answer.text.contains("Connection: close"), "\(answer.text.prefix(80))")
                    #expect(answer.closed, "the service closed its side")
                }
            } // the clients close only now: the service's ends are gone already
            var after = openFileDescriptorCount()
            for _ in 0..<100 where after > baseline + 4 {
                try await Task.sleep(for: .milliseconds(50))
                after = openFileDescriptorCount()
            }
            #expect(after <= baseline + 4, "descriptors \(baseline) → \(after)")
            await test.stop()
        }

        /// libsoup 3.2 drops a connection whose header block passes 64 KiB with no answer; the
        /// service answers 431 / 414 at its own, lower limits before libsoup reads a byte.
        @Test func oversizedHeadersAndTargetsGetAStatusAtEverySize() async throws {
            let test = try await TestService.start()
            let port = UInt16(try #require(URLComponents(string: test.base)?.port))
            let limits = ServiceLimits()
            let cases: [(request: String, status: String)] = [
                ("GET /api/Queues HTTP/1.1\r\nHost: h\r\nX-Pad: \(String(repeating: "p", count: limits.maxHeaderBytes + 2048))\r\n\r\n", "431"),
                ("GET /api/Queues HTTP/1.1\r\nHost: h\r\nX-Pad: \(String(repeating: "p", count: 70 << 10))\r\n\r\n", "431"),
                ("GET /api/Queues?x=\(String(repeating: "q", count: limits.maxURLBytes + 512)) HTTP/1.1\r\nHost: h\r\n\r\n", "414"),
                ("GET /api/Queues?x=\(String(repeating: "q", count: 70 << 10)) HTTP/1.1\r\nHost: h\r\n\r\n", "414"),
            ]
            for (request, status) in cases {
                let client = try HostileClient(port: port)
                client.send(request)
                let answer = await client.readToEnd(seconds: 5)
                #expect(answer.text.hasPrefix("HTTP/1.1 \(status)"), "\(request.utf8.count) bytes: \(answer.text.prefix(80))")
                #expect(answer.text.contains("Connection: close") && answer.closed)
            }
            #expect(try await test.get(ECVAPI.queues).status == 200, "still serving")
            await test.stop()
        }
    }
}
