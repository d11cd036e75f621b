// libFuzzer target: the DTLS datagram reader the handshake replay runs on everything the far end
// sends before its DTLS is done, on arbitrary bytes: it never reads past the datagram, answers
// the same twice, and finds handshake progress only in a datagram that starts like DTLS.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDTLS(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    let datagram = DTLSDatagram(bytes)
    guard datagram == DTLSDatagram(bytes) else { fatalError("two readings of one datagram differ") }
    if case .handshake(let progress) = datagram {
        guard let first = bytes.first, (20...63).contains(first) else { fatalError("handshake progress in a datagram that is not DTLS") }
        guard progress.position <= 0xFFFF_FFFF_FFFF || progress.position == .max else { fatalError("a position past message and fragment") }
    }
    return 0
}
