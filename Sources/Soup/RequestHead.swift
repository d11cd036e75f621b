/// What the server decides from a request's head on its own, before libsoup or a handler sees it
/// (docs/protocol.md §0.1). Pure Swift on bytes and strings, with no C: the front door and the
/// request guard apply it, and the `http-head` and `request-fields` fuzz targets check it.
enum RequestHead {
    /// What the front door makes of a connection's first bytes.
    enum Peek: Equatable {
        /// More bytes are needed.
        case waiting
        /// The header block ended: the connection goes to libsoup.
        case complete
        /// `414` (the request line is too long) or `431` (the header block does not end in time).
        case refused(status: Int)
    }

    /// - Parameters:
    ///   - maxURLBytes: the request target's limit; the request line may take 64 bytes more.
    ///   - peekLimit: how many bytes the header block must end within.
    static func peek(_ bytes: ArraySlice<UInt8>, maxURLBytes: Int, peekLimit: Int) -> Peek {
        if headerBlockEnds(in: bytes) { return .complete }
        let requestLine = bytes.firstIndex(of: 10).map { $0 - bytes.startIndex } ?? bytes.count
        if requestLine > maxURLBytes + 64 { return .refused(status: 414) }
        if bytes.count >= peekLimit { return .refused(status: 431) }
        return .waiting
    }

    /// A blank line (CRLF CRLF, or bare LF LF as libsoup also accepts) ends the header block.
    static func headerBlockEnds(in bytes: ArraySlice<UInt8>) -> Bool {
        var previous: UInt8 = 0, beforePrevious: UInt8 = 0
        for byte in bytes {
            if byte == 10, previous == 10 || (previous == 13 && beforePrevious == 10) { return true }
            beforePrevious = previous
            previous = byte
        }
        return false
    }

    /// Why a request's declared body is refused, or nil. RFC 9110 §8.6: `Content-Length` is one
    /// non-negative decimal (the same value repeated, in one header or several, is tolerated);
    /// anything else, a negative or folded value or two that differ, is `400`; a length over
    /// `maxBodyBytes` is `413`; a length with `Transfer-Encoding` is `400` (request smuggling).
    static func bodyProblem(contentLengths: [String], hasTransferEncoding: Bool, maxBodyBytes: Int) -> (Int, String)? {
        guard !contentLengths.isEmpty else { return nil }
        let values = Set(contentLengths.flatMap { $0.split(separator: ",") }.map(trimmed))
        guard values.count == 1, let text = values.first, !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) }),
              text.utf8.count <= 18, let length = Int(text) else {
            return (400, "invalid Content-Length")
        }
        if length > maxBodyBytes { return (413, "the body is larger than \(maxBodyBytes) bytes") }
        if hasTransferEncoding { return (400, "both Content-Length and Transfer-Encoding") }
        return nil
    }

    /// Splits a raw (still percent-encoded) query string into decoded name/value pairs, in order.
    /// `+` means space, as in HTML forms; a name without `=` gets an empty value; `%XX` is a byte,
    /// and bytes that are not UTF-8 become U+FFFD. A part with a broken escape (`%` without two hex
    /// digits) or an escaped NUL is kept as sent (with its `+` as spaces), as GLib's unescape did.
    static func decodeQuery(_ query: String?) -> [(name: String, value: String)] {
        guard let query, !query.isEmpty else { return [] }
        return query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (unescaped(parts[0]), parts.count > 1 ? unescaped(parts[1]) : "")
        }
    }

    private static func unescaped(_ raw: Substring) -> String {
        let spaced = raw.utf8.map { $0 == UInt8(ascii: "+") ? UInt8(ascii: " ") : $0 }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(spaced.count)
        var index = 0
        while index < spaced.count {
            guard spaced[index] == UInt8(ascii: "%") else {
                bytes.append(spaced[index])
                index += 1
                continue
            }
            guard index + 2 < spaced.count, let high = hexValue(spaced[index + 1]), let low = hexValue(spaced[index + 2]),
                  high | low != 0 else { return String(decoding: spaced, as: UTF8.self) }
            bytes.append(high << 4 | low)
            index += 3
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 48...57: byte - 48
        case 65...70: byte - 55
        case 97...102: byte - 87
        default: nil
        }
    }

    private static func trimmed(_ text: Substring) -> String {
        var text = text
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return String(text)
    }
}
