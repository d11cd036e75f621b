import Foundation
import Glibc
import GLibCore
import GStreamer
import NetworkTestSupport
import Testing

/// ICE candidates name IPv6 link-local addresses without a zone (`fe80::…`), and libnice often
/// nominates such a pair between two hosts on one link; the early nudges must reach it. A
/// zone-less link-local destination is reachable through a shared socket because that socket is
/// bound to its device: here two sockets on the link-local address of a lab's veth end, one
/// shared and sent through, the other receiving.
@Suite(.serialized, .enabled(if: NetworkLab.isAvailable, "\(NetworkLab.unavailableReason ?? "")"))
struct LinkLocalSendTests {
    /// The interface's link-local address (no zone) and index.
    static func linkLocal(of interface: String) throws -> (address: String, index: UInt32) {
        let index = if_nametoindex(interface)
        try #require(index != 0, "no interface \(interface)")
        var list: UnsafeMutablePointer<ifaddrs>?
        try #require(getifaddrs(&list) == 0)
        defer { freeifaddrs(list) }
        var next = list
        while let entry = next?.pointee {
            defer { next = entry.ifa_next }
            guard let address = entry.ifa_addr, Int32(address.pointee.sa_family) == AF_INET6,
                  String(cString: entry.ifa_name) == interface else { continue }
            var ipv6 = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee }
            guard ipv6.sin6_addr.__in6_u.__u6_addr8.0 == 0xFE, ipv6.sin6_addr.__in6_u.__u6_addr8.1 & 0xC0 == 0x80 else { continue }
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            inet_ntop(AF_INET6, &ipv6.sin6_addr, &text, socklen_t(text.count))
            return (String(cString: text), index)
        }
        Issue.record("\(interface) has no link-local address")
        throw CancellationError()
    }

    /// A UDP socket bound to `address` on interface `index` and an unused port; nil while the
    /// address is still tentative (duplicate address detection runs for a second or two after the
    /// link comes up).
    static func bound(to address: String, index: UInt32) -> (descriptor: Int32, port: UInt16)? {
        let descriptor = socket(AF_INET6, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var local = sockaddr_in6()
        local.sin6_family = sa_family_t(AF_INET6)
        local.sin6_scope_id = index
        inet_pton(AF_INET6, address, &local.sin6_addr)
        var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        let done = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard done else {
            close(descriptor)
            return nil
        }
        return (descriptor, UInt16(bigEndian: local.sin6_port))
    }

    @Test("a shared socket on a link-local address sends to a link-local destination named without a zone, through the socket's own interface")
    func sendsToZonelessLinkLocal() async throws {
        let lab = try NetworkLab()
        defer { lab.close() }
        let (address, index) = try Self.linkLocal(of: lab.hostInterface)
        var sockets: [(descriptor: Int32, port: UInt16)] = []
        let deadline = ContinuousClock.now + .seconds(10)
        while sockets.count < 2 {
            if let socket = Self.bound(to: address, index: index) { sockets.append(socket); continue }
            try #require(ContinuousClock.now < deadline, "\(address) stayed tentative")
            try await Task.sleep(for: .milliseconds(100))
        }
        defer { for socket in sockets { close(socket.descriptor) } }
        let endpoint = try #require(DatagramEndpoint(host: address, port: sockets[0].port))
        let destination = try #require(DatagramEndpoint(host: address, port: sockets[1].port))
        let shared = try #require(DatagramSocket.duplicates(boundTo: [endpoint])[endpoint])
        defer { shared.close() }
        #expect(shared.send([7, 7, 7], to: destination), "sendto \(destination) failed: errno \(errno)")
        var poller = pollfd(fd: sockets[1].descriptor, events: Int16(POLLIN), revents: 0)
        try #require(poll(&poller, 1, 1_000) == 1, "nothing arrived at \(destination)")
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = recv(sockets[1].descriptor, &buffer, buffer.count, 0)
        #expect(Array(buffer.prefix(max(0, count))) == [7, 7, 7])
    }
}
