// libFuzzer target: the DER walker that finds a certificate's public key for `sha256/` pins, on
// arbitrary bytes: it answers nil for anything it cannot read, and a key inside the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDER(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let spki = DERReader.subjectPublicKeyInfo(ofCertificate: bytes), spki.count > bytes.count {
        fatalError("a public key longer than its certificate")
    }
    _ = DERReader.isCertificate(bytes)
    return 0
}
