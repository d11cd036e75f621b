// libFuzzer target `http-head`: a connection's first bytes as the server's front door and request
// guard judge them (RequestHead, docs/protocol.md §0.1). The first byte picks the limits; the rest
// is the head. Properties, against a plain second reading of the same bytes: the head is complete
// exactly when a blank line (CRLF CRLF or LF LF) ends it; 414 and 431 only past their limits; and
// of the Content-Length and Transfer-Encoding headers (continuation lines folded in, as libsoup
// reads them) a body is admitted only with one non-negative decimal length within the limit and
// no Transfer-Encoding: negative, non-decimal, conflicting or folded lengths are 400, larger 413.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPHead(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let knob = bytes.first else { return 0 }
    let head = bytes.dropFirst()
    let maxURLBytes = 16 + Int(knob & 0x3F), peekLimit = 64 + Int(knob >> 6) * 256, maxBodyBytes = 1 + Int(knob) * 7

    let ends = plainBlankLine(in: Array(head))
    switch RequestHead.peek(head, maxURLBytes: maxURLBytes, peekLimit: peekLimit) {
    case .complete:
        if !ends { fatalError("complete without a blank line") }
    case .waiting:
        if ends { fatalError("a blank line, yet waiting") }
        if head.count >= peekLimit { fatalError("waiting past the peek limit") }
    case .refused(let status):
        if ends { fatalError("refused \(status) though the head was complete") }
        let firstLine = head.firstIndex(of: 10).map { $0 - head.startIndex } ?? head.count
        if status == 414, firstLine <= maxURLBytes + 64 { fatalError("414 for a request line of \(firstLine) bytes") }
        if status == 431, head.count < peekLimit { fatalError("431 for \(head.count) bytes") }
        if status != 414, status != 431 { fatalError("refused with \(status)") }
    }

    let fields = unfoldedFields(Array(head))
    let lengths = fields.filter { $0.name == "content-length" }.map(\.value)
    let chunked = fields.contains { $0.name == "transfer-encoding" }
    let problem = RequestHead.bodyProblem(contentLengths: lengths, hasTransferEncoding: chunked, maxBodyBytes: maxBodyBytes)
    guard !lengths.isEmpty else {
        if problem != nil { fatalError("a body refused without a Content-Length") }
        return 0
    }
    let values = Set(lengths.flatMap { $0.split(separator: ",") }.map { trim($0) })
    let decimal = values.count == 1 && values.first.map { !$0.isEmpty && $0.count <= 18 && $0.allSatisfy { $0.isASCII && $0.isNumber } } == true
    switch problem {
    case nil:
        guard decimal, let length = Int(values.first ?? ""), length <= maxBodyBytes, !chunked else {
            fatalError("admitted Content-Length \(lengths) (Transfer-Encoding: \(chunked)) over \(maxBodyBytes)")
        }
    case let (status, _)?:
        if status == 413, !(decimal && Int(values.first ?? "").map { $0 > maxBodyBytes } == true) { fatalError("413 for \(lengths)") }
        if status == 400, decimal, !chunked, Int(values.first ?? "").map({ $0 > maxBodyBytes }) == false { fatalError("400 for \(lengths)") }
        if status != 400, status != 413 { fatalError("refused with \(status)") }
    }
    return 0
}

/// The header block ends at a blank line: LF LF or LF CR LF.
private func plainBlankLine(in bytes: [UInt8]) -> Bool {
    for index in bytes.indices where bytes[index] == 10 {
        if index >= 1, bytes[index - 1] == 10 { return true }
        if index >= 2, bytes[index - 1] == 13, bytes[index - 2] == 10 { return true }
    }
    return false
}

/// The header fields after the request line, up to a blank line, with continuation lines (starting
/// with a space or tab) folded into the field before them, names lowercased, values trimmed.
private func unfoldedFields(_ bytes: [UInt8]) -> [(name: String, value: String)] {
    let text = String(decoding: bytes, as: UTF8.self)
    var fields: [(name: String, value: String)] = []
    for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropFirst() {
        let line = line.hasSuffix("\r") ? line.dropLast() : line
        if line.isEmpty { break }
        if line.first == " " || line.first == "\t" {
            if !fields.isEmpty { fields[fields.count - 1].value = trim(Substring(fields[fields.count - 1].value + " " + trim(line))) }
            continue
        }
        guard let colon = line.firstIndex(of: ":") else { continue }
        fields.append((line[..<colon].lowercased(), trim(line[line.index(after: colon)...])))
    }
    return fields
}

private func trim(_ text: Substring) -> String {
    var text = text
    while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
    while let last = text.last, last == " " || last == "\t" { text.removeLast() }
    return String(text)
}
