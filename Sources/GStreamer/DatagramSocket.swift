internal import Glibc
import Synchronization

/// A numeric IPv4 or IPv6 address and a UDP port.
package struct DatagramEndpoint: Hashable, Sendable, CustomStringConvertible {
    package var host: String
    package var port: UInt16

    /// nil unless `host` is a numeric address (no names: nothing here resolves) and `port` is not 0.
    package init?(host: String, port: UInt16) {
        guard port != 0, SocketAddress(host: host, port: port) != nil else { return nil }
        self.host = host
        self.port = port
    }

    package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    package var isIPv6: Bool { host.contains(":") }
}

/// A second descriptor of a UDP socket this process already has open and bound, found by its
/// local address among the process's open descriptors and duplicated: what is sent through it
/// leaves from that socket's address and port, while whoever opened it goes on using its own
/// descriptor. The binding's primitive for borrowing a library's socket (see the WebRTC layer's
/// `SharedDatagramSocket`, which borrows libnice's).
///
/// The duplicate is this object's own: the socket stays open (its port bound) until `close()`,
/// whatever the other descriptor's owner does meanwhile, so a send can never reach another
/// socket that took over that descriptor number.
package final class DatagramSocket: Sendable {
    package let endpoint: DatagramEndpoint
    /// nil once closed.
    private let descriptor: Mutex<Int32?>

    private init(endpoint: DatagramEndpoint, descriptor: Int32) {
        self.endpoint = endpoint
        self.descriptor = Mutex(descriptor)
    }

    deinit { close() }

    /// The UDP sockets of this process bound to any of `endpoints`, each duplicated (one pass over
    /// `/proc/self/fd`: two system calls per open descriptor). Endpoints no socket is bound to are
    /// left out.
    package static func duplicates(boundTo endpoints: Set<DatagramEndpoint>) -> [DatagramEndpoint: DatagramSocket] {
        // Each endpoint's address built once, not once per descriptor.
        let wanted = endpoints.compactMap { endpoint in SocketAddress(host: endpoint.host, port: endpoint.port).map { (endpoint, $0) } }
        guard !wanted.isEmpty, let directory = opendir("/proc/self/fd") else { return [:] }
        defer { closedir(directory) }
        let listing = dirfd(directory)
        var found: [DatagramEndpoint: DatagramSocket] = [:]
        while found.count < wanted.count, let entry = readdir(directory) {
            let name = entryName(entry)
            guard let number = Int32(name), number != listing, Self.isDatagramSocket(number),
                  let bound = SocketAddress.local(of: number), let endpoint = wanted.first(where: { bound.matches($0.1) })?.0,
                  found[endpoint] == nil else { continue }
            let duplicate = fcntl(number, F_DUPFD_CLOEXEC, 0)
            guard duplicate >= 0 else { continue }
            found[endpoint] = DatagramSocket(endpoint: endpoint, descriptor: duplicate)
        }
        return found
    }

    /// The name of a `readdir` entry, read in place within the entry's own record (`d_reclen`
    /// bytes). The record is only as long as its name needs (about 24 bytes for a descriptor
    /// number), not `dirent`'s 256-byte `d_name` array: copying that array out reads past the record
    /// and, when the record ends a mapping, off the mapped memory (a SIGSEGV seen at 200 calls).
    static func entryName(_ entry: UnsafePointer<dirent>) -> String {
        let record = UnsafeRawPointer(entry)
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        let recordLength = Int(record.load(fromByteOffset: MemoryLayout<dirent>.offset(of: \dirent.d_reclen)!, as: UInt16.self))
        let room = max(0, recordLength - nameOffset)
        let name = UnsafeRawBufferPointer(start: record + nameOffset, count: room)
        return String(decoding: name.prefix { $0 != 0 }, as: UTF8.self)
    }

    /// Sends `bytes` as one datagram to `destination`, never blocking (a full send buffer drops it,
    /// as the path might have). False when closed, or when the system refused it. A link-local
    /// destination needs no zone: a socket bound to a link-local address is bound to its device.
    @discardableResult
    package func send(_ bytes: [UInt8], to destination: DatagramEndpoint) -> Bool {
        guard var address = SocketAddress(host: destination.host, port: destination.port) else { return false }
        return descriptor.withLock { descriptor in
            guard let descriptor else { return false }
            let sent = bytes.withUnsafeBytes { payload in
                address.withPointer { sendto(descriptor, payload.baseAddress, payload.count, Int32(MSG_DONTWAIT), $0, $1) }
            }
            return sent == bytes.count
        }
    }

    /// Closes the duplicate (the descriptor it was duplicated from is untouched). Idempotent.
    package func close() {
        let taken = descriptor.withLock { descriptor in defer { descriptor = nil }; return descriptor }
        if let taken { _ = Glibc.close(taken) }
    }

    private static func isDatagramSocket(_ descriptor: Int32) -> Bool {
        var type: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(descriptor, SOL_SOCKET, SO_TYPE, &type, &length) == 0 && type == Int32(SOCK_DGRAM.rawValue)
    }
}

/// A `sockaddr_in` or `sockaddr_in6`, built from a numeric address or read from a socket.
struct SocketAddress {
    private var storage = sockaddr_storage()
    private var length: socklen_t

    init?(host: String, port: UInt16) {
        if host.contains(":") {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else { return nil }
            self.init(holding: address)
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { return nil }
            self.init(holding: address)
        }
    }

    /// `address` is a filled `sockaddr_in` or `sockaddr_in6`.
    private init<Address>(holding address: Address) {
        length = socklen_t(MemoryLayout<Address>.size)
        withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: address, as: Address.self) }
    }

    private init(storage: sockaddr_storage, length: socklen_t) {
        self.storage = storage
        self.length = length
    }

    /// The address `descriptor` is bound to, nil for an unbound socket or another family.
    static func local(of descriptor: Int32) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let read = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard read == 0, [AF_INET, AF_INET6].contains(Int32(storage.ss_family)) else { return nil }
        return SocketAddress(storage: storage, length: length)
    }

    /// The same family, address and port as `other` (IPv6 scope ids aside).
    func matches(_ other: SocketAddress) -> Bool {
        guard other.storage.ss_family == storage.ss_family else { return false }
        return withUnsafeBytes(of: storage) { mine in
            withUnsafeBytes(of: other.storage) { theirs in
                if Int32(storage.ss_family) == AF_INET {
                    let ours = mine.load(as: sockaddr_in.self), wanted = theirs.load(as: sockaddr_in.self)
                    return ours.sin_port == wanted.sin_port && ours.sin_addr.s_addr == wanted.sin_addr.s_addr
                }
                let ours = mine.load(as: sockaddr_in6.self), wanted = theirs.load(as: sockaddr_in6.self)
                return ours.sin6_port == wanted.sin6_port
                    && withUnsafeBytes(of: ours.sin6_addr) { a in withUnsafeBytes(of: wanted.sin6_addr) { b in a.elementsEqual(b) } }
            }
        }
    }

    mutating func withPointer<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        let length = self.length
        return withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) } }
    }
}
