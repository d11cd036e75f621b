internal import CSoup
import Foundation
internal import GLibCore
import Synchronization

/// Where a plain-HTTP server's connections wait until their request headers are complete, on a
/// thread of their own with edge-triggered epoll, before libsoup ever sees them.
///
/// libsoup 3.2 on GLib 2.74 gives every connection a poll record in the main context and, on
/// every read, removes and re-adds it: a walk over the context's list of all poll records each
/// time, and a rebuilt poll array on the next iteration. With 2,000 idle and slow-header
/// connections held, each header line a slowloris sent cost the main loop O(connections), the loop
/// saturated, and a health check waited hundreds of milliseconds (Benchmarks/connections). Here a
/// waiting connection costs nothing on the main loop: it is accepted here, its bytes are only
/// peeked at (`MSG_PEEK`), and once the header block is complete the untouched socket is handed to
/// libsoup (`soup_server_accept_iostream`), which then reads the request as usual.
///
/// It also answers what libsoup cannot: a header block or request line too long to complete
/// within `peekLimit` is answered `431` / `414` here (libsoup 3.2 drops a connection whose header
/// block passes its own 64 KiB with no answer at all). A connection whose headers are not complete
/// at the header deadline, or that closes first, is closed without an answer.
// @unchecked Sendable: `waiting`, `deadlines`, `generation`, `acceptRetryAt` and `buffer` are used
// only on the front door's own thread; the descriptors and `handOff` are immutable; `stopping` is
// atomic. Not `MainLoopActor`: that thread is not the main loop (keeping this work off the loop
// is the point), and, blocking in epoll_wait, it cannot serve as an actor's executor either.
final class FrontDoor: @unchecked Sendable {
    struct Limits {
        var headerTimeout: Duration
        var maxURLBytes: Int
        var maxHeaderBytes: Int
        /// Connections one client address may have waiting here at once; one more is closed at
        /// once, unanswered (so no one client can hold the service's descriptors).
        var maxWaitingPerAddress: Int
        /// How much of a connection's first bytes is looked at for the end of the header block:
        /// request line and headers at their limits, with room to spare, and under libsoup's own
        /// 64 KiB (so libsoup never meets a header block it would drop).
        var peekLimit: Int { min(maxURLBytes + maxHeaderBytes + 1024, 63 << 10) }
    }

    private struct Waiting {
        let generation: Int
        /// The client's address bytes (IPv4 or IPv6), whose share it counts in.
        let address: [UInt8]
        /// Set once a refusal was written: the connection is drained until the client closes it
        /// or the linger deadline passes, so the answer is not lost to a reset.
        var lingering = false
    }

    private struct Deadline: Comparable {
        let due: ContinuousClock.Instant
        let fd: Int32
        let generation: Int
        static func < (lhs: Deadline, rhs: Deadline) -> Bool { (lhs.due, lhs.generation) < (rhs.due, rhs.generation) }
    }

    private let listenFD: Int32
    private let epollFD: Int32
    private let wake: (read: Int32, write: Int32)
    private let limits: Limits
    private let handOff: @Sendable (Int32) -> Void
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    private var waiting: [Int32: Waiting] = [:]
    private var waitingPerAddress: [[UInt8]: Int] = [:]
    private var deadlines = MinHeap<Deadline>()
    private var generation = 0
    private var acceptRetryAt: ContinuousClock.Instant?
    private var buffer: [UInt8]

    /// Starts serving `listenFD` (a bound, listening, non-blocking socket the caller keeps open
    /// until `stop()` returned). `handOff` receives each connection whose headers are complete;
    /// it owns the descriptor from then on.
    init(listenFD: Int32, limits: Limits, handOff: @escaping @Sendable (Int32) -> Void) throws(HTTPServerError) {
        self.listenFD = listenFD
        self.limits = limits
        self.handOff = handOff
        buffer = [UInt8](repeating: 0, count: limits.peekLimit)
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        var pipeFDs: [Int32] = [-1, -1]
        guard epollFD >= 0, pipe(&pipeFDs) == 0 else {
            if epollFD >= 0 { close(epollFD) }
            throw .listenFailed(host: "", port: 0, message: "cannot set up the connection poller: errno \(errno)")
        }
        wake = (pipeFDs[0], pipeFDs[1])
        for fd in pipeFDs { Self.setNonBlockingAndCloseOnExec(fd) }
        watch(wake.read, events: EPOLLIN.rawValue)
        watch(listenFD, events: EPOLLIN.rawValue | EPOLLET.rawValue)
        let thread = Thread { [self] in run() }
        thread.name = "ecv-http-front-door"
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Stops the thread and closes every connection still waiting; returns once it is done.
    func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
        finished.wait()
    }

    // MARK: The front door's thread

    private func run() {
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        while !stopping.load(ordering: .acquiring) {
            let count = epoll_wait(epollFD, &events, Int32(events.count), timeoutMilliseconds())
            if count < 0, errno != EINTR { break }
            for index in 0..<max(0, Int(count)) {
                let fd = events[index].data.fd
                if fd == wake.read { continue }
                if fd == listenFD { acceptAll(); continue }
                examine(fd, hungUp: events[index].events & (EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0)
            }
            if let retry = acceptRetryAt, retry <= .now {
                acceptRetryAt = nil
                acceptAll()
            }
            expireDue()
        }
        for fd in waiting.keys { close(fd) }
        waiting = [:]
        waitingPerAddress = [:]
        close(epollFD)
        close(wake.read)
        close(wake.write)
        finished.signal()
    }

    private func timeoutMilliseconds() -> Int32 {
        let next = [deadlines.first?.due, acceptRetryAt].compactMap { $0 }.min()
        guard let next else { return -1 }
        let delay = max(.zero, next - .now)
        return Int32(clamping: delay.millisecondsRoundedUp)
    }

    private func watch(_ fd: Int32, events: UInt32) {
        var event = epoll_event(events: events, data: epoll_data_t(fd: fd))
        _ = epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event)
    }

    private func acceptAll() {
        while true {
            var peer = sockaddr_storage()
            var peerLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listenFD, $0, &peerLength) }
            }
            if fd < 0 {
                // Out of descriptors: the connections stay queued in the kernel; try again shortly
                // (the listening socket is edge-triggered and would not say so again).
                if errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM {
                    acceptRetryAt = .now + .milliseconds(100)
                }
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            let address = Self.addressBytes(of: peer)
            guard waitingPerAddress[address, default: 0] < limits.maxWaitingPerAddress else {
                close(fd)
                continue
            }
            waitingPerAddress[address, default: 0] += 1
            Self.setNonBlockingAndCloseOnExec(fd)
            var one: Int32 = 1
            _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            generation += 1
            waiting[fd] = Waiting(generation: generation, address: address)
            deadlines.insert(Deadline(due: .now + limits.headerTimeout, fd: fd, generation: generation))
            watch(fd, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue)
            examine(fd, hungUp: false)
        }
    }

    private static func setNonBlockingAndCloseOnExec(_ fd: Int32) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC)
    }

    /// New bytes (or the end) on a waiting connection.
    private func examine(_ fd: Int32, hungUp: Bool) {
        guard let state = waiting[fd] else { return }
        if state.lingering {
            drain(fd)
            return
        }
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_PEEK | MSG_DONTWAIT)) }
        if count < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { if hungUp { finish(fd) }; return }
            finish(fd)
            return
        }
        if count == 0 {
            finish(fd) // closed before sending a request
            return
        }
        switch RequestHead.peek(buffer[0..<count], maxURLBytes: limits.maxURLBytes, peekLimit: limits.peekLimit) {
        case .complete:
            _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
            forget(fd)
            handOff(fd)
        case .refused(status: 414):
            refuse(fd, status: 414, reason: "URI Too Long", message: "the request target is longer than \(limits.maxURLBytes) bytes")
        case .refused:
            refuse(fd, status: 431, reason: "Request Header Fields Too Large",
                   message: "the request headers exceed \(limits.maxHeaderBytes) bytes")
        case .waiting:
            if hungUp { finish(fd) } // half a request, then the end
        }
    }

    /// Writes the refusal, stops sending, and keeps reading (and discarding) for a moment so the
    /// client reads the answer before the connection goes.
    private func refuse(_ fd: Int32, status: Int, reason: String, message: String) {
        let body = #"{"code":"REQUEST_REFUSED","message":"\#(message)"}"#
        let response = "HTTP/1.1 \(status) \(reason)\r\nConnection: close\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.utf8.count)\r\n\r\n" + body
        _ = response.utf8CString.withUnsafeBufferPointer { send(fd, $0.baseAddress, $0.count - 1, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        shutdown(fd, Int32(SHUT_WR))
        guard var state = waiting[fd] else { return }
        state.lingering = true
        waiting[fd] = state
        deadlines.insert(Deadline(due: .now + .seconds(2), fd: fd, generation: state.generation))
        drain(fd)
    }

    private func drain(_ fd: Int32) {
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 { continue }
            if count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return }
            finish(fd)
            return
        }
    }

    private func finish(_ fd: Int32) {
        guard forget(fd) else { return }
        close(fd) // also leaves the epoll set
    }

    /// Stops tracking a waiting connection (it was handed off or is being closed).
    @discardableResult
    private func forget(_ fd: Int32) -> Bool {
        guard let state = waiting.removeValue(forKey: fd) else { return false }
        let left = waitingPerAddress[state.address, default: 1] - 1
        waitingPerAddress[state.address] = left > 0 ? left : nil
        return true
    }

    /// The address bytes of an accepted peer: 4 for IPv4, 16 for IPv6 (an IPv4-mapped IPv6
    /// address counts as its IPv4 address), empty for anything else.
    private static func addressBytes(of storage: sockaddr_storage) -> [UInt8] {
        let family = Int32(storage.ss_family)
        return withUnsafeBytes(of: storage) { raw -> [UInt8] in
            switch family {
            case AF_INET:
                let offset = MemoryLayout<sockaddr_in>.offset(of: \.sin_addr) ?? 4
                return Array(raw[offset..<offset + 4])
            case AF_INET6:
                let offset = MemoryLayout<sockaddr_in6>.offset(of: \.sin6_addr) ?? 8
                let bytes = Array(raw[offset..<offset + 16])
                return bytes[0..<12] == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF] ? Array(bytes[12...]) : bytes
            default:
                return []
            }
        }
    }

    private func expireDue() {
        let now = ContinuousClock.now
        while let first = deadlines.first, first.due <= now {
            deadlines.removeFirst()
            // A descriptor number is reused once closed: the generation tells which connection.
            guard waiting[first.fd]?.generation == first.generation else { continue }
            finish(first.fd)
        }
    }
}
