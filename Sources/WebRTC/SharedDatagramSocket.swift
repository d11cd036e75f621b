import GStreamer

/// One of libnice's UDP sockets (an ICE host candidate's), borrowed: a duplicate of its
/// descriptor, found by the candidate's address (`DatagramSocket`), through which
/// `ConnectivityNudge` sends connectivity checks that leave from the candidate's own address and
/// port, as if libnice had sent them, while libnice goes on reading the socket as before.
/// The duplicate keeps the port bound until `close()`, so a check never leaves from a socket
/// that took over libnice's descriptor number after the call ended.
final class SharedDatagramSocket: Sendable {
    private let socket: DatagramSocket

    private init(_ socket: DatagramSocket) { self.socket = socket }

    var endpoint: DatagramEndpoint { socket.endpoint }

    /// libnice's sockets bound to any of `endpoints` (this side's host candidates), each borrowed.
    /// Endpoints no socket is bound to are left out.
    static func find(boundTo endpoints: Set<DatagramEndpoint>) -> [DatagramEndpoint: SharedDatagramSocket] {
        DatagramSocket.duplicates(boundTo: endpoints).mapValues(SharedDatagramSocket.init)
    }

    /// Sends one datagram, never blocking (see `DatagramSocket.send`).
    @discardableResult
    func send(_ bytes: [UInt8], to destination: DatagramEndpoint) -> Bool { socket.send(bytes, to: destination) }

    /// Gives the borrowed socket back (libnice's own descriptor is untouched). Idempotent.
    func close() { socket.close() }
}
