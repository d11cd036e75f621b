import Foundation
import MediaTestSupport

/// A real TURN server for a test: Debian's coturn (`turnserver`, installed by `make test-deps`)
/// inside a `NetworkLab`'s namespace, listening and relaying on the lab's address only, with one
/// long-term credential, stopped by `close()`. Not on 127.0.0.1: libnice sends to a loopback TURN
/// server from its non-loopback host sockets, which this machine routes out of its real
/// interface; the lab's address is reached over the veth pair. Nothing else is started (no TLS,
/// DTLS, TCP relay or CLI listeners); its log and user database live in a temporary directory.
package final class TurnServer: Sendable {
    package static let executable = "/usr/bin/turnserver"
    package static let port = 3478
    package let address: String
    package let username = "ecv-test"
    package let credential: String
    private let process: Process
    private let directory: URL

    /// nil when coturn can be run here; otherwise why not (a test skips with it, never passes).
    package static var unavailableReason: String? {
        if let lab = NetworkLab.unavailableReason { return lab }
        return FileManager.default.isExecutableFile(atPath: executable) ? nil : "\(executable) is missing (make test-deps installs coturn)"
    }

    /// The server's URL for an ICE server entry (with `username` and `credential`).
    package var url: String { "turn:\(address):\(Self.port)?transport=udp" }

    /// What coturn logged so far.
    package var log: String { (try? String(contentsOf: directory.appendingPathComponent("turn.log"), encoding: .utf8)) ?? "" }

    package init(in lab: NetworkLab) async throws {
        address = lab.labAddress
        credential = "secret-\(UInt32.random(in: 1...UInt32.max))"
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ecv-turn-\(lab.namespace)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        process = lab.process(URL(fileURLWithPath: Self.executable), [
            "-n", "-v", "--listening-ip=\(address)", "--relay-ip=\(address)", "--listening-port=\(Self.port)",
            "--min-port=49152", "--max-port=49352", "--lt-cred-mech", "--user=\(username):\(credential)", "--realm=ecvkit.test",
            "--no-cli", "--no-tls", "--no-dtls", "--no-tcp-relay", "--userdb=\(directory.path)/turndb",
            "--pidfile=\(directory.path)/turn.pid", "--simple-log", "--log-file=\(directory.path)/turn.log", "--no-software-attribute",
        ])
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // `ip netns exec` execs coturn in place: the process's own /proc/<pid>/net/udp is the lab's.
        let table = "/proc/\(process.processIdentifier)/net/udp"
        let bound = Self.hex(address) + ":" + String(format: "%04X", Self.port)
        let deadline = ContinuousClock.now + .seconds(10)
        while !((try? String(contentsOfFile: table, encoding: .utf8))?.contains(bound) ?? false) {
            guard process.isRunning, ContinuousClock.now < deadline else {
                close()
                throw TestFailure("coturn did not listen on \(address):\(Self.port): \(log.suffix(2000))")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Stops the server (SIGKILL: nothing of it needs to be kept) and removes its directory.
    package func close() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory) // a leftover temporary directory harms nothing
    }

    /// An IPv4 address as /proc/net/udp prints it: the 32-bit value in host (little-endian) order.
    private static func hex(_ address: String) -> String {
        let octets = address.split(separator: ".").compactMap { UInt8($0) }
        return octets.reversed().map { String(format: "%02X", $0) }.joined()
    }
}
