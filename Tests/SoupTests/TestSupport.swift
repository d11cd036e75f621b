import Foundation
import Glibc
import MediaTestSupport
import Soup
import Testing

/// Reads events until `.closed` (inclusive) or until `count` events arrived.
func collect(_ events: WebSocketEvents, count: Int = .max, seconds: Double = 10) async throws -> [WebSocketEvent] {
    try await within(seconds, "collecting WebSocket events") {
        var received: [WebSocketEvent] = []
        for await event in events {
            received.append(event)
            if received.count >= count { break }
        }
        return received
    }
}

/// A TCP socket on 127.0.0.1 that listens but never accepts, built with plain POSIX calls so the
/// tests provoke timeouts without any server logic.
final class SilentListener: @unchecked Sendable { // fds are only closed in deinit
    let fd: Int32
    let port: UInt16
    private var fillers: [Int32] = []

    init(backlog: Int32) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, Glibc.listen(fd, backlog) == 0 else { close(fd); throw POSIXError(.EADDRINUSE) }
        self.fd = fd
        port = localPort(of: fd)
    }

    /// Opens `count` connections that nobody accepts, so the accept queue is full and the kernel
    /// drops further SYNs: the next connect attempt hangs until the client gives up.
    func fillBacklog(count: Int) {
        for _ in 0..<count { fillers.append(startConnecting(to: port)) }
    }

    deinit {
        fillers.forEach { close($0) }
        close(fd)
    }
}

/// A non-blocking TCP socket with a connect to 127.0.0.1:`port` under way (the kernel finishes it).
func startConnecting(to port: UInt16) -> Int32 {
    let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = port.bigEndian
    _ = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    return client
}

private func localPort(of fd: Int32) -> UInt16 {
    var address = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return UInt16(bigEndian: address.sin_port)
}

/// A port on 127.0.0.1 that was just free: bound, read, closed. Connecting to it is refused.
func closedPort() -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    _ = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    let port = localPort(of: fd)
    close(fd)
    return port
}

/// Open file descriptors of this process.
func openFileDescriptorCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
}

/// Threads of this process, from /proc/self/status.
func threadCount() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
    for line in status.split(separator: "\n") where line.hasPrefix("Threads:") {
        return Int(line.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces)) ?? -1
    }
    return -1
}

/// Runs a command-line tool in `directory` and returns its standard output (see `runTool`).
@discardableResult
func run(_ tool: String, _ arguments: [String], in directory: URL) throws -> String {
    try runTool(tool, arguments, in: directory)
}

/// A fresh temporary directory, removed by the caller.
func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("soup-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Starts a server on 127.0.0.1 with an ephemeral port and returns it with its base URL.
func startServer(_ configure: (HTTPServer) -> Void = { _ in }, tls: TLSIdentity? = nil) async throws -> (HTTPServer, String) {
    let server = HTTPServer(tls: tls)
    configure(server)
    try await server.listen()
    return (server, try #require(server.baseURL))
}

/// Runs `body` against a freshly started server and stops the server afterwards, whatever happens.
func withServer<T>(tls: TLSIdentity? = nil, _ configure: (HTTPServer) -> Void,
                   _ body: (HTTPServer, String) async throws -> T) async throws -> T {
    let (server, base) = try await startServer(configure, tls: tls)
    do {
        let result = try await body(server, base)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}

/// A one-connection HTTP responder on a plain POSIX socket that sends its body a few bytes at a
/// time with pauses, to show that a steady trickle is not a read timeout. Runs on its own thread
/// (blocking socket calls have no place on the cooperative pool).
final class TricklingResponder: @unchecked Sendable { // `listener` is immutable; the thread owns the rest
    let listener: SilentListener
    private let done = DispatchSemaphore(value: 0)

    init(chunks: [String], pause: Duration) throws {
        listener = try SilentListener(backlog: 4)
        let fd = listener.fd
        let body = chunks.joined()
        let thread = Thread { [done] in
            defer { done.signal() }
            let connection = accept(fd, nil, nil)
            guard connection >= 0 else { return }
            defer { close(connection) }
            var request: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !String(decoding: request, as: UTF8.self).contains("\r\n\r\n") {
                let count = read(connection, &buffer, buffer.count)
                guard count > 0 else { return }
                request += buffer[0..<count]
            }
            let head = "HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
            _ = head.withCString { write(connection, $0, strlen($0)) }
            for chunk in chunks {
                Thread.sleep(forTimeInterval: Double(pause.components.attoseconds) / 1e18 + Double(pause.components.seconds))
                _ = chunk.withCString { write(connection, $0, strlen($0)) }
            }
        }
        thread.start()
    }

    var url: String { "http://127.0.0.1:\(listener.port)/trickle" }

    /// Waits (off the cooperative pool) for the responder thread to finish.
    func finished() async {
        let done = done
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { done.wait(); continuation.resume() }
        }
    }
}
