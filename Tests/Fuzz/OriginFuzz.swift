// libFuzzer target `origin`: the peer server's Origin check (serializedOriginHost, which
// PeerAPIKey.admits compares with its domains; docs/protocol.md §8.2). Property: a header is
// accepted only as a serialized origin, exactly `http(s)://host[:port]` lowercased, so the host it
// names is the host the text names: no userinfo, path, query or fragment, a port of 1-5 digits up
// to 65535.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOrigin(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let host = serializedOriginHost(text) else { return 0 }
    let lower = text.lowercased()
    let scheme = lower.hasPrefix("https://") ? "https://" : lower.hasPrefix("http://") ? "http://" : ""
    if scheme.isEmpty { fatalError("\"\(text)\" has no http(s) scheme") }
    guard lower.hasPrefix(scheme + host) else { fatalError("host \(host) is not what follows the scheme in \"\(text)\"") }
    let rest = lower.dropFirst(scheme.count + host.count)
    if !rest.isEmpty {
        let port = rest.dropFirst()
        guard rest.first == ":", (1...5).contains(port.count), port.allSatisfy({ $0.isASCII && $0.isNumber }),
              let number = Int(port), number <= 65535 else { fatalError("\"\(rest)\" after the host of \"\(text)\"") }
    }
    if host.contains(where: { "@/\\?#% ".contains($0) }) { fatalError("host \(host) from \"\(text)\"") }
    return 0
}
