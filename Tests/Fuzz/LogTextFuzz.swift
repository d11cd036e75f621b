// libFuzzer target: LogText.sanitized on arbitrary text: the result is one line (no control
// character, no line or paragraph separator) and bounded, whatever the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLogText(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let limit = Int(bytes.first ?? 64) + 1
    let output = LogText.sanitized(String(decoding: bytes, as: UTF8.self), limit: limit)
    for scalar in output.unicodeScalars where scalar.properties.generalCategory == .control
        || (0x2028...0x202E).contains(scalar.value) {
        fatalError("an unescaped U+\(String(scalar.value, radix: 16)) got through")
    }
    if output.utf8.count > limit + 40 { fatalError("\(output.utf8.count) bytes for a limit of \(limit)") }
    return 0
}
