import Foundation
import Synchronization

/// A network namespace joined to this one by a veth pair, whose path the test impairs while a
/// call runs over it: random loss and blackholes with nftables (this kernel has no `sch_netem`),
/// rate caps with `tbf`. libnice ignores 127.0.0.1, so a call between the two sides uses the veth
/// addresses: `hostAddress` here, `labAddress` inside.
///
/// Impairments apply to the namespace's end of the pair, in both directions, at the device:
/// packets leaving the lab (the `netdev` family's `egress` hook) and packets reaching it
/// (`ingress`); rate caps shape each direction's egress. A drop there is silent, as loss on a
/// real path is. A drop in the IP stack's `output` hook is not: the sender's `sendmsg` fails with
/// EPERM, and libnice takes a failed send as a failed connectivity check, so the lab's side lost
/// a nominated pair for good where a real network would only have lost a packet (the misses once
/// seen at 20 % loss, the lab peer's ICE still checking while ours had completed). Only UDP and
/// TCP are dropped: ARP, neighbour discovery and ICMP get through, as the lab's plumbing.
/// Needs root, `ip`, `nft`, `tc` and Linux 5.16 or later (the `egress` hook); `unavailableReason`
/// says why not when a test must skip.
package final class NetworkLab: Sendable {
    package let namespace: String
    package let hostAddress: String
    package let labAddress: String
    /// The host end of the veth pair (this namespace).
    package let hostInterface: String
    private let labInterface: String

    private static let counter = Mutex(0)

    /// nil when labs can be made here; otherwise why not (a test skips with it, never passes).
    package static let unavailableReason: String? = {
        guard getuid() == 0 else { return "network namespaces need root" }
        for tool in ["/usr/sbin/ip", "/usr/sbin/nft", "/usr/sbin/tc"] where !FileManager.default.isExecutableFile(atPath: tool) {
            return "\(tool) is missing (make test-deps installs iproute2 and nftables)"
        }
        do {
            let probe = try NetworkLab()
            probe.close()
            return nil
        } catch {
            return "cannot make a network namespace: \(error)"
        }
    }()

    package static var isAvailable: Bool { unavailableReason == nil }

    package init() throws {
        let number = Self.counter.withLock { counter in counter += 1; return counter }
        // Unique per process and lab: names fit IFNAMSIZ, the /24 is picked from pid and number,
        // passing over those already on an interface here (other processes' labs, some left behind
        // by a killed test): a /24 on two interfaces sends the call's packets to the wrong one.
        let tag = "\(getpid() % 10_000)x\(number)"
        let taken = Self.takenSubnets()
        var octet = (Int(getpid()) * 7 + number * 13) % 200 + 20
        for _ in 0..<200 where taken.contains(octet) { octet = (octet - 20 + 1) % 200 + 20 }
        namespace = "ecvlab\(tag)"
        hostInterface = "el\(tag)a"
        labInterface = "el\(tag)b"
        hostAddress = "10.213.\(octet).1"
        labAddress = "10.213.\(octet).2"
        do {
            try Self.run("ip", "netns", "add", namespace)
            try Self.run("ip", "link", "add", hostInterface, "type", "veth", "peer", "name", labInterface)
            try Self.run("ip", "link", "set", labInterface, "netns", namespace)
            try Self.run("ip", "addr", "add", "\(hostAddress)/24", "dev", hostInterface)
            try Self.run("ip", "link", "set", hostInterface, "up")
            try inside("ip", "addr", "add", "\(labAddress)/24", "dev", labInterface)
            try inside("ip", "link", "set", labInterface, "up")
            try inside("ip", "link", "set", "lo", "up")
            try inside("nft", "add", "table", "netdev", "lab")
            for (chain, hook) in [("lab_in", "ingress"), ("lab_out", "egress")] {
                try inside("nft", "add", "chain", "netdev", "lab", chain,
                           "{ type filter hook \(hook) device \"\(labInterface)\" priority 0; policy accept; }")
            }
        } catch {
            close()
            throw error
        }
    }

    /// Drops `percent` % of the packets in each direction, at random (0 removes the loss): UDP and
    /// TCP alike, so a call cannot escape the loss over an ICE-TCP pair. `sparingTCPPort` keeps
    /// one TCP port whole both ways: a browser's page and signaling socket on the service cross
    /// the lab too, and are not what a loss figure is about.
    package func setLoss(percent: Int, sparingTCPPort: UInt16? = nil) throws {
        try clearFilters()
        guard percent > 0 else { return }
        let drop = ["numgen", "random", "mod", "100", "<", String(percent), "counter", "drop"]
        for chain in ["lab_in", "lab_out"] {
            let path = ["nft", "add", "rule", "netdev", "lab", chain]
            if let port = sparingTCPPort {
                try inside(path + ["meta", "l4proto", "udp"] + drop)
                try inside(path + ["tcp", "sport", "!=", String(port), "tcp", "dport", "!=", String(port)] + drop)
            } else {
                try inside(path + Self.udpAndTCP + drop)
            }
        }
    }

    /// The nftables match for what an impairment drops: the call's transports, not the lab's ARP,
    /// neighbour discovery or ICMP.
    private static let udpAndTCP = ["meta", "l4proto", "{", "udp,", "tcp", "}"]

    /// Drops everything both ways until lifted: the path is gone, the sockets are not.
    package func setBlackhole(_ on: Bool) throws {
        try clearFilters()
        guard on else { return }
        for chain in ["lab_in", "lab_out"] {
            try inside(["nft", "add", "rule", "netdev", "lab", chain] + Self.udpAndTCP + ["counter", "drop"])
        }
    }

    /// Lets the first STUN Binding success response leave the lab over UDP (the payload's first two
    /// bytes, 0x0101) and drops every later one, and TCP both ways (where STUN is framed and offsets
    /// vary), until lifted. The host's first check is answered and its nominating check
    /// (regular nomination) is not: the lab is through ICE and the host is not. (The quota counts
    /// bytes with the Ethernet header, 178 for libnice's answer: the second one is over 250.)
    package func setDropsCheckAnswersFromLab(_ on: Bool) throws {
        try clearFilters()
        guard on else { return }
        try inside("nft", "add", "rule", "netdev", "lab", "lab_out", "meta", "l4proto", "udp", "@th,64,16", "0x0101",
                   "quota", "over", "250", "bytes", "counter", "drop")
        for chain in ["lab_in", "lab_out"] { try inside("nft", "add", "rule", "netdev", "lab", chain, "meta", "l4proto", "tcp", "drop") }
    }

    /// Lets the first STUN Binding request from the host's address into the lab over UDP and drops
    /// every later one, and TCP both ways, until lifted. The host's first check is answered and
    /// the lab's checks are too, so both have a working pair, but the host's nominating check
    /// (regular nomination) never arrives: neither end is through ICE. (The quota counts the
    /// packet from its IP header at the lab's ingress; libnice's checks are under 200 bytes.)
    package func setDropsChecksIntoLab(_ on: Bool) throws {
        try clearFilters()
        guard on else { return }
        try inside("nft", "add", "rule", "netdev", "lab", "lab_in", "ip", "saddr", hostAddress, "meta", "l4proto", "udp",
                   "@th,64,16", "0x0001", "quota", "over", "250", "bytes", "counter", "drop")
        for chain in ["lab_in", "lab_out"] { try inside("nft", "add", "rule", "netdev", "lab", chain, "meta", "l4proto", "tcp", "drop") }
    }

    /// Packets the current loss or blackhole rules dropped (both directions) since they were set:
    /// the proof that an impairment was really applied.
    package func droppedPackets() throws -> Int {
        let listing = try Self.run(["ip", "netns", "exec", namespace, "nft", "list", "table", "netdev", "lab"])
        let words = listing.split(whereSeparator: \.isWhitespace)
        return zip(words, words.dropFirst()).filter { $0.0 == "packets" }.compactMap { Int($0.1) }.reduce(0, +)
    }

    /// Caps each direction at `kbps` with a token bucket (nil lifts it). Its queue holds 100 ms
    /// of traffic, as a home router's would; what does not fit is dropped.
    package func setRateCap(kbps: Int?) throws {
        for (interface, prefix) in [(labInterface, ["ip", "netns", "exec", namespace]), (hostInterface, [])] {
            if let kbps {
                let burst = max(4_000, kbps * 1000 / 8 / 50)
                try Self.run(prefix + ["tc", "qdisc", "replace", "dev", interface, "root", "tbf", "rate", "\(kbps)kbit",
                                       "burst", String(burst), "latency", "100ms"])
            } else {
                // No qdisc of ours yet: nothing to remove.
                _ = try? Self.run(prefix + ["tc", "qdisc", "del", "dev", interface, "root"])
            }
        }
    }

    /// `tc -s qdisc` of the cap on each egress, the host's (what the host sends into the lab) and
    /// the lab's: packets sent, dropped and over the limit, the queue's backlog; for a benchmark's
    /// trace.
    package func rateCapStatistics() throws -> (towardLab: String, fromLab: String) {
        (try Self.run(["tc", "-s", "qdisc", "show", "dev", hostInterface]),
         try Self.run(["ip", "netns", "exec", namespace, "tc", "-s", "qdisc", "show", "dev", labInterface]))
    }

    /// `ip netns exec <lab> <executable> <arguments>`: a process whose sockets live in the lab.
    package func process(_ executable: URL, _ arguments: [String]) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
        process.arguments = ["netns", "exec", namespace, executable.path] + arguments
        return process
    }

    /// Removes the namespace (and with it the veth pair and every rule). Idempotent.
    package func close() {
        // Either may already be gone (a failed init, a second close): removal is best effort.
        _ = try? Self.run("ip", "netns", "del", namespace)
        _ = try? Self.run("ip", "link", "del", hostInterface)
    }

    deinit { close() }

    /// The third octets of the 10.213.x.0/24 networks on this namespace's interfaces.
    private static func takenSubnets() -> Set<Int> {
        // Without a listing, the pick from pid and number stands alone, as it did before.
        let listing = (try? run(["ip", "-o", "-4", "addr", "show"])) ?? ""
        return Set(listing.split(separator: " ").compactMap { word -> Int? in
            let parts = word.split(separator: ".")
            guard parts.count == 4, parts[0] == "10", parts[1] == "213" else { return nil }
            return Int(parts[2])
        })
    }

    private func clearFilters() throws {
        for chain in ["lab_in", "lab_out"] { try inside("nft", "flush", "chain", "netdev", "lab", chain) }
    }

    private func inside(_ arguments: String...) throws { try inside(arguments) }

    private func inside(_ arguments: [String]) throws {
        try Self.run(["ip", "netns", "exec", namespace] + arguments)
    }

    private static func run(_ arguments: String...) throws { try run(arguments) }

    /// Runs `/usr/sbin/<arguments[0]>` and returns its output (a few lines: the pipes cannot fill).
    @discardableResult
    private static func run(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/\(arguments[0])")
        process.arguments = Array(arguments.dropFirst())
        let errors = Pipe(), output = Pipe()
        process.standardError = errors
        process.standardOutput = output
        try process.run()
        process.waitUntilExit()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw LabError(command: arguments.joined(separator: " "), message: message.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return printed
    }
}

package struct LabError: Error, CustomStringConvertible {
    package let command: String
    package let message: String
    package var description: String { "\(command): \(message)" }
}
