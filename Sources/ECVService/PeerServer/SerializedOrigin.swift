// Pure Swift with no imports, so the `origin` fuzz target compiles this file as it is.

/// The host of a serialized origin (`http` or `https`, a host name or bracketed address, an
/// optional port; no userinfo, path, query or fragment), lowercased; nil for anything else.
func serializedOriginHost(_ origin: String) -> String? {
    let text = origin.lowercased()
    let authority: Substring
    if text.hasPrefix("https://") { authority = text.dropFirst(8) } else if text.hasPrefix("http://") { authority = text.dropFirst(7) } else { return nil }
    let host: Substring, port: Substring?
    if authority.hasPrefix("[") {
        guard let close = authority.firstIndex(of: "]") else { return nil }
        host = authority[...close]
        let rest = authority[authority.index(after: close)...]
        if rest.isEmpty { port = nil } else if rest.hasPrefix(":") { port = rest.dropFirst() } else { return nil }
        let address = host.dropFirst().dropLast().utf8
        guard !address.isEmpty, address.allSatisfy({ $0 == 58 || $0 == 46 || (48...57).contains($0) || (97...102).contains($0) }) else { return nil }
    } else {
        let parts = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        host = parts[0]
        port = parts.count > 1 ? parts[1] : nil
        guard !host.isEmpty, host.utf8.allSatisfy({ $0 == 45 || $0 == 46 || (48...57).contains($0) || (97...122).contains($0) }) else { return nil }
    }
    if let port {
        guard (1...5).contains(port.utf8.count), port.utf8.allSatisfy({ (48...57).contains($0) }), let number = Int(port), number <= 65535 else { return nil }
    }
    guard host.utf8.count <= 253 + 2 else { return nil }
    return String(host)
}
