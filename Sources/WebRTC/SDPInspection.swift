import MediaPipeline

/// Small read-only looks into SDP text that negotiation needs.
enum SDPInspection {
    /// m-line index → `a=mid` value.
    static func mids(_ sdp: String) -> [Int: String] {
        var result: [Int: String] = [:]
        var index = -1
        for line in sdp.split(whereSeparator: \.isNewline) {
            if line.hasPrefix("m=") { index += 1 }
            if line.hasPrefix("a=mid:"), index >= 0 { result[index] = String(line.dropFirst(6)) }
        }
        return result
    }

    /// SSRC → media kind from the `a=ssrc` lines of each audio/video section.
    static func ssrcKinds(_ sdp: String) -> [UInt: MediaKind] {
        var kinds: [UInt: MediaKind] = [:]
        var current: MediaKind?
        for line in sdp.split(whereSeparator: \.isNewline) {
            if line.hasPrefix("m=") {
                current = MediaKind(rawValue: String(line.dropFirst(2).prefix { $0 != " " }))
            } else if line.hasPrefix("a=ssrc:"), let current,
                      let ssrc = UInt(line.dropFirst(7).prefix { $0.isNumber }) {
                kinds[ssrc] = current
            }
        }
        return kinds
    }

    /// True when the SDP has an m-line for each of `kinds` ("audio", "video").
    static func includes(kinds: Set<String>, _ sdp: String) -> Bool {
        let media = Set(mediaLines(sdp).compactMap { $0.dropFirst(2).split(separator: " ").first.map(String.init) })
        return kinds.isSubset(of: media)
    }

    static func iceUfrag(_ sdp: String) -> String? { attribute("ice-ufrag", sdp) }

    static func icePassword(_ sdp: String) -> String? { attribute("ice-pwd", sdp) }

    /// The value of the first `a=<name>:` line, session or media level.
    private static func attribute(_ name: String, _ sdp: String) -> String? {
        let prefix = "a=\(name):"
        return sdp.split(whereSeparator: \.isNewline).first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
    }

    /// The session id of the `o=` line.
    static func sessionID(_ sdp: String) -> String? {
        guard let origin = sdp.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("o=") }) else { return nil }
        let fields = origin.split(separator: " ")
        return fields.count > 1 ? String(fields[1]) : nil
    }

    /// True when `ours` beats `theirs` (numeric when both are different numbers, else
    /// lexicographic), so two different ids always have exactly one winner: "7" and "007" are
    /// the same number, and comparing only numerically made both sides lose and rebuild.
    static func sessionIDOrder(_ ours: String, _ theirs: String) -> Bool {
        if let a = UInt64(ours), let b = UInt64(theirs), a != b { return a > b }
        return ours > theirs
    }

    /// A message naming media the answer rejected (port 0), e.g. an unsupported codec.
    static func rejectedMedia(offer: String, answer: String) -> String? {
        let offered = mediaLines(offer), answered = mediaLines(answer)
        let rejected = zip(offered, answered).filter { $0.1.hasPrefix("m=audio 0") || $0.1.hasPrefix("m=video 0") }
        guard !rejected.isEmpty else { return nil }
        return "media rejected in the answer: " + rejected.map { String($0.0.prefix(60)) }.joined(separator: "; ")
    }

    /// A UDP candidate of the RTP component: its type (`host`, `srflx`, …) and transport address.
    struct UDPCandidate: Equatable {
        var type: String
        var priority: UInt32
        var address: String
        var port: UInt16
    }

    static let maxCandidateLength = 1_024
    /// RFC 8445 §5.1.2.1: a candidate's priority is between 1 and 2^31 − 1.
    static let candidatePriorities: ClosedRange<UInt32> = 1...0x7FFF_FFFF

    /// `candidate:<foundation> 1 udp <priority> <address> <port> typ <type> …`, with or without
    /// `a=`; nil for anything else: TCP, component 2, a priority outside `candidatePriorities`, a
    /// port of 0, an address that is not an IPv4 or IPv6 literal's characters (an mDNS name), a
    /// line over `maxCandidateLength`.
    static func udpCandidate(_ line: some StringProtocol) -> UDPCandidate? {
        let whole = Substring(line)
        let body = whole.hasPrefix("a=") ? whole.dropFirst(2) : whole
        guard body.hasPrefix("candidate:"), body.utf8.count <= maxCandidateLength else { return nil }
        let fields = body.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 8, fields[1] == "1", fields[2].lowercased() == "udp", fields[6] == "typ",
              let priority = UInt32(fields[3]), candidatePriorities.contains(priority), let port = UInt16(fields[5]), port != 0, fields[4].utf8.count <= 45,
              fields[4].allSatisfy({ $0.isHexDigit || $0 == "." || $0 == ":" }) else { return nil }
        return UDPCandidate(type: String(fields[7]), priority: priority, address: String(fields[4]), port: port)
    }

    /// True for a candidate (`candidate:<foundation> <component> <transport> <priority> <address>
    /// …`, with or without `a=`) whose address is link-local: IPv6 `fe80::/10` or IPv4
    /// `169.254.0.0/16`. Such an address reaches only its own link, and between two peers on one host
    /// a call ran over whichever interface's link-local address (a container's or a network lab's
    /// veth end) and lost its path both ways when that interface went, with ICE still connected.
    static func isLinkLocalCandidate(_ line: some StringProtocol) -> Bool {
        let whole = Substring(line)
        let body = whole.hasPrefix("a=") ? whole.dropFirst(2) : whole
        guard body.hasPrefix("candidate:"), body.utf8.count <= maxCandidateLength else { return false }
        let fields = body.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
        guard fields.count >= 5 else { return false }
        let address = fields[4].lowercased()
        if address.contains(":") {
            // fe80::/10: the first 16 bits are fe80 to febf.
            let group = address.prefix { $0 != ":" }
            guard group.count == 4, let value = UInt16(group, radix: 16) else { return false }
            return value & 0xFFC0 == 0xFE80
        }
        return address.hasPrefix("169.254.")
    }

    /// The UDP candidates of an SDP's `a=candidate` lines (see `udpCandidate`), link-local ones
    /// left out as the signalled ones are (`isLinkLocalCandidate`): webrtcbin's local description
    /// lists every candidate it gathered, and a nudge from a link-local socket would make the far end
    /// learn that address after all.
    static func udpCandidates(_ sdp: String) -> [UDPCandidate] {
        sdp.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("a=candidate:") && !isLinkLocalCandidate($0) }.compactMap { udpCandidate($0) }
    }

    private static func mediaLines(_ sdp: String) -> [Substring] {
        sdp.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("m=") }
    }
}
