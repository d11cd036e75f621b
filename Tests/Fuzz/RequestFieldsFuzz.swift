// libFuzzer target `request-fields`: the query string and the `Authorization: Bearer` header as the
// service reads them (RequestHead.decodeQuery, bearerToken). Properties: a query made by
// percent-encoding any names and values decodes back to them, in order; any query decodes to one
// item per non-empty `&` segment; a bearer token is never empty nor padded, and comes only from a
// `Bearer` scheme (after optional leading spaces); "Bearer <token>" gives the token back.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestFields(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: bytes, as: UTF8.self)

    let items = RequestHead.decodeQuery(text)
    let segments = text.split(separator: "&", omittingEmptySubsequences: true).count
    if items.count != segments { fatalError("\(items.count) items from \(segments) segments") }

    // Names and values from the input (split at 0xFF bytes), encoded and decoded again.
    let parts = bytes.split(separator: 0xFF, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        .filter { !$0.contains("\u{0}") }
    let pairs = stride(from: 0, to: parts.count - 1, by: 2).map { (parts[$0], parts[$0 + 1]) }.filter { !$0.0.isEmpty }
    let encoded = pairs.map { percentEncoded($0.0) + "=" + percentEncoded($0.1) }.joined(separator: "&")
    let decoded = RequestHead.decodeQuery(encoded)
    if decoded.map(\.name) != pairs.map(\.0) || decoded.map(\.value) != pairs.map(\.1) {
        fatalError("\(pairs) → \(encoded) → \(decoded)")
    }

    if let token = bearerToken(text) {
        if token.isEmpty || token.first == " " || token.last == " " { fatalError("token \"\(token)\" from \"\(text)\"") }
        // Leading spaces are optional whitespace before the field value (RFC 9110 §5.5), not part of it.
        if !text.drop(while: { $0 == " " }).lowercased().hasPrefix("bearer") { fatalError("a token from another scheme: \"\(text)\"") }
    }
    let plain = String(text.unicodeScalars.filter { $0.isASCII && $0.value > 32 && $0.value < 127 })
    if !plain.isEmpty, bearerToken("Bearer " + plain) != plain { fatalError("Bearer \(plain) lost its token") }
    return 0
}

/// Every byte but the unreserved ones as %XX (a space as +).
private func percentEncoded(_ text: String) -> String {
    var result = ""
    for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            result.unicodeScalars.append(Unicode.Scalar(byte))
        case UInt8(ascii: " "):
            result += "+"
        default:
            let hex = Array("0123456789ABCDEF".utf8)
            result += "%" + String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 15)]], as: UTF8.self)
        }
    }
    return result
}
