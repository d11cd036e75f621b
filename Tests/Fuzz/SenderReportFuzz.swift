// libFuzzer target: the sender-report rewrite every RTCP packet from the far end goes through
// before rtpbin (SenderReportRewrite, SenderReportSmoother), on arbitrary bytes: it never writes
// past the packet and only ever over a sender report's 4-byte RTP time, whatever history the
// smoother has.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSenderReport(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    var smoother = SenderReportSmoother()
    // The input read as three packets in a row (its halves, then all of it), so a smoother with
    // history sees the later ones.
    for packet in [bytes[..<(size / 2)], bytes[(size / 2)...], bytes[...]] {
        let packet = UnsafeRawBufferPointer(rebasing: packet)
        let patches = SenderReportRewrite.patches(for: packet, smoother: &smoother)
        for patch in patches {
            guard patch.offset >= 16, patch.bytes.count == 4, patch.offset + 4 <= packet.count else {
                fatalError("a patch at \(patch.offset) of \(patch.bytes.count) bytes in a packet of \(packet.count)")
            }
            guard packet[patch.offset - 15] == SenderReportRewrite.senderReportType else { fatalError("a patch outside a sender report") }
        }
    }
    return 0
}
