import Glibc
import GStreamer
import Testing

/// `DatagramSocket` against real sockets: one this test opens and binds as a library would,
/// found by its address and sent through, and one that receives and reads who sent.
@Suite struct DatagramSocketTests {
    /// A UDP socket on 127.0.0.1 and an unused port, and that port.
    static func boundSocket() throws -> (descriptor: Int32, port: UInt16) {
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        try #require(descriptor >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(bound == 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return (descriptor, UInt16(bigEndian: address.sin_port))
    }

    /// The next datagram on `descriptor` within a second, and the port it came from.
    static func receive(on descriptor: Int32) -> (bytes: [UInt8], fromPort: UInt16)? {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 1_000) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 2_048)
        var sender = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let count = buffer.withUnsafeMutableBytes { bytes in
            withUnsafeMutablePointer(to: &sender) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(descriptor, bytes.baseAddress, bytes.count, 0, $0, &length) }
            }
        }
        guard count >= 0 else { return nil }
        return (Array(buffer.prefix(count)), UInt16(bigEndian: sender.sin_port))
    }

    @Test("a bound UDP socket is found by its address and port; what goes through the duplicate leaves from that port, even after the library closed its own descriptor")
    func sendsFromTheFoundSocket() throws {
        let library = try Self.boundSocket(), receiver = try Self.boundSocket()
        defer { close(receiver.descriptor) }
        let endpoint = try #require(DatagramEndpoint(host: "127.0.0.1", port: library.port))
        let destination = try #require(DatagramEndpoint(host: "127.0.0.1", port: receiver.port))
        let found = DatagramSocket.duplicates(boundTo: [endpoint])
        let shared = try #require(found[endpoint])
        #expect(found.count == 1)
        #expect(shared.send([1, 2, 3], to: destination))
        let first = try #require(Self.receive(on: receiver.descriptor))
        #expect(first.bytes == [1, 2, 3] && first.fromPort == library.port)
        // The library closes its descriptor (its session ended): the duplicate still holds the socket.
        close(library.descriptor)
        #expect(shared.send([4], to: destination))
        let second = try #require(Self.receive(on: receiver.descriptor))
        #expect(second.bytes == [4] && second.fromPort == library.port)
        shared.close()
        #expect(!shared.send([5], to: destination))
        #expect(Self.receive(on: receiver.descriptor) == nil)
        // Closed for good: nothing is bound to the port any more, so nothing is found there.
        #expect(DatagramSocket.duplicates(boundTo: [endpoint]).isEmpty)
    }

    @Test("an address no socket of this process is bound to finds nothing; endpoints are numeric addresses with a port")
    func findsNothingElsewhere() throws {
        let unbound = try #require(DatagramEndpoint(host: "127.0.0.1", port: 9))
        #expect(DatagramSocket.duplicates(boundTo: [unbound]).isEmpty)
        #expect(DatagramSocket.duplicates(boundTo: []).isEmpty)
        #expect(DatagramEndpoint(host: "host.local", port: 9) == nil)
        #expect(DatagramEndpoint(host: "127.0.0.1", port: 0) == nil)
        #expect(DatagramEndpoint(host: "::1", port: 9)?.isIPv6 == true)
    }
}
