import Glibc

/// What a WebSocket has handed to libsoup that the kernel has not taken yet: libsoup's outgoing
/// queue, which has no bound and no API to read it. A peer that never reads fills the kernel's
/// send buffer first (its memory, bounded by `tcp_wmem`), then this queue, in the process's own
/// memory; so the queue is bounded here, in bytes.
///
/// The frames handed over are counted as they go to libsoup (their exact size on the wire); what
/// the kernel took is read from the TCP socket (`TCP_INFO`: bytes sent once, plus those not sent
/// yet), against what it had taken when the WebSocket began. Frames libsoup makes itself (pongs,
/// pings, the close) and TLS record overhead only make the count low, never high: a reader that
/// keeps up is never taken for one that does not.
struct OutgoingBacklog {
    /// The most bytes the queue may hold; a frame that would take it past is refused.
    let limit: Int
    private let descriptor: Int32
    private let baseline: Int
    private var handed = 0

    /// nil when `descriptor` is no TCP socket (the kernel's count is not there to compare with).
    init?(descriptor: Int32, limit: Int) {
        guard let taken = Self.kernelTaken(descriptor) else { return nil }
        self.descriptor = descriptor
        self.limit = limit
        baseline = taken
    }

    /// Bytes handed over and not yet taken by the kernel (0 when the kernel cannot say).
    var queued: Int {
        guard let taken = Self.kernelTaken(descriptor) else { return 0 }
        return max(0, handed - (taken - baseline))
    }

    /// Counts a frame of `bytes` as handed over, unless the queue would then hold more than `limit`.
    mutating func admit(_ bytes: Int) -> Bool {
        guard queued + bytes <= limit else { return false }
        handed += bytes
        return true
    }

    /// A data frame's size on the wire: the 2-byte header, the extended length, a client's mask.
    static func frameBytes(payload: Int, masked: Bool) -> Int {
        let length = payload < 126 ? 0 : payload <= 0xFFFF ? 2 : 8
        return 2 + length + (masked ? 4 : 0) + payload
    }

    /// The bytes the kernel has taken from this process on the TCP socket so far: sent once
    /// (`tcpi_bytes_sent` less `tcpi_bytes_retrans`) plus queued but not sent (`tcpi_notsent_bytes`).
    /// nil for a descriptor that is no TCP socket, or a kernel older than 4.19.
    static func kernelTaken(_ descriptor: Int32) -> Int? {
        // struct tcp_info (linux/tcp.h); Glibc's copy ends before the counters used here.
        let notSentOffset = 144, sentOffset = 200, retransmittedOffset = 208, needed = 216
        var info = [UInt8](repeating: 0, count: 232)
        var length = socklen_t(info.count)
        let status = info.withUnsafeMutableBytes { getsockopt(descriptor, Int32(IPPROTO_TCP), TCP_INFO, $0.baseAddress, &length) }
        guard status == 0, Int(length) >= needed else { return nil }
        return info.withUnsafeBytes { raw in
            let sent = raw.loadUnaligned(fromByteOffset: sentOffset, as: UInt64.self)
            let retransmitted = raw.loadUnaligned(fromByteOffset: retransmittedOffset, as: UInt64.self)
            let notSent = raw.loadUnaligned(fromByteOffset: notSentOffset, as: UInt32.self)
            return Int(sent &- retransmitted) + Int(notSent)
        }
    }
}
