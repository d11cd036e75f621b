import MediaPipeline

/// One RTP format of an SDP media section: `a=rtpmap`, `a=fmtp` and `a=rtcp-fb` of a payload type.
package struct SDPFormat: Sendable, Equatable, CustomStringConvertible {
    package var payloadType: Int
    /// Upper-cased, as GStreamer's `encoding-name`: "VP8", "H264", "OPUS".
    package var encodingName: String
    package var clockRate: Int
    package var channels: Int?
    /// `a=fmtp` parameters with lower-cased names, e.g. `packetization-mode` → "1".
    package var parameters: [String: String] = [:]
    /// `a=rtcp-fb` values, e.g. "nack", "nack pli", "ccm fir", "transport-cc".
    package var feedback: [String] = []

    package var description: String { "\(encodingName)/\(payloadType)" }
}

/// An `m=` section of a session description, as far as negotiation needs it.
package struct SDPMediaSection: Sendable, Equatable {
    package var index: Int
    /// "audio", "video" or "application".
    package var media: String
    package var port: Int
    package var mid: String?
    package var formats: [SDPFormat]
    /// `a=extmap` id → URI.
    package var extensions: [Int: String]
    /// `a=bundle-only`: port 0 here means "in the bundle", not "rejected".
    package var isBundleOnly = false
    /// `sendrecv`, `sendonly`, `recvonly` or `inactive`, from the section's writer's view.
    package var direction = "sendrecv"

    package var kind: MediaKind? { MediaKind(rawValue: media) }
    package var isRejected: Bool { port == 0 && !isBundleOnly }
}

/// Reads the media sections of SDP text received from a remote peer.
///
/// The text is untrusted: it is bounded (`maxLength`, `maxSections`, `maxFormats`), numbers are
/// range-checked, and anything malformed is skipped rather than trusted, so a hostile description
/// can at worst describe no usable media.
package enum SDPMediaSections {
    package static let maxLength = 256 * 1024
    static let maxSections = 64
    static let maxFormats = 128

    package static func parse(_ sdp: String) -> [SDPMediaSection] {
        guard sdp.utf8.count <= maxLength else { return [] }
        var sections: [SDPMediaSection] = []
        for rawLine in sdp.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingASCIIWhitespaceSuffix()
            if line.hasPrefix("m=") {
                guard sections.count < maxSections else { break }
                sections.append(section(from: line.dropFirst(2), index: sections.count))
                continue
            }
            guard !sections.isEmpty, line.hasPrefix("a=") else { continue }
            apply(attribute: line.dropFirst(2), to: &sections[sections.count - 1])
        }
        return sections
    }

    private static func section(from text: Substring, index: Int) -> SDPMediaSection {
        let fields = text.split(separator: " ")
        let formats = fields.dropFirst(3).prefix(maxFormats).compactMap { Int($0) }.filter(isPayloadType)
            .map { SDPFormat(payloadType: $0, encodingName: "", clockRate: 0) }
        return SDPMediaSection(index: index, media: fields.first.map(String.init) ?? "",
                               port: fields.count > 1 ? Int(fields[1]) ?? 0 : 0, mid: nil, formats: formats, extensions: [:])
    }

    private static func isPayloadType(_ value: Int) -> Bool { (0...127).contains(value) }

    private static func apply(attribute: Substring, to section: inout SDPMediaSection) {
        let (name, value) = split(attribute, at: ":")
        switch name {
        case "mid":
            section.mid = String(value)
        case "bundle-only":
            section.isBundleOnly = true
        case "sendrecv", "sendonly", "recvonly", "inactive":
            section.direction = String(name)
        case "rtpmap":
            let (pt, codec) = split(value, at: " ")
            let parts = codec.split(separator: "/")
            guard let type = Int(pt), parts.count >= 2, let rate = Int(parts[1]), rate > 0, rate <= 1_000_000 else { return }
            update(type, in: &section) { format in
                format.encodingName = parts[0].uppercased()
                format.clockRate = rate
                format.channels = parts.count > 2 ? Int(parts[2]) : nil
            }
        case "fmtp":
            let (pt, list) = split(value, at: " ")
            guard let type = Int(pt) else { return }
            update(type, in: &section) { format in
                for parameter in list.split(separator: ";").prefix(32) {
                    let (key, setting) = split(parameter.trimmingASCIIWhitespace(), at: "=")
                    guard !key.isEmpty else { continue }
                    format.parameters[key.lowercased()] = String(setting)
                }
            }
        case "rtcp-fb":
            let (pt, feedback) = split(value, at: " ")
            guard !feedback.isEmpty else { return }
            if pt == "*" {
                for index in section.formats.indices where section.formats[index].feedback.count < 16 {
                    section.formats[index].feedback.append(String(feedback))
                }
            } else if let type = Int(pt) {
                update(type, in: &section) { if $0.feedback.count < 16 { $0.feedback.append(String(feedback)) } }
            }
        case "extmap":
            let (id, rest) = split(value, at: " ")
            let identifier = id.split(separator: "/").first.flatMap { Int($0) }
            guard let identifier, (1...255).contains(identifier), section.extensions.count < 32 else { return }
            section.extensions[identifier] = String(rest.split(separator: " ").first ?? "")
        default:
            break
        }
    }

    private static func update(_ payloadType: Int, in section: inout SDPMediaSection, _ change: (inout SDPFormat) -> Void) {
        guard let index = section.formats.firstIndex(where: { $0.payloadType == payloadType }) else { return }
        change(&section.formats[index])
    }

    private static func split(_ text: Substring, at separator: Character) -> (Substring, Substring) {
        guard let position = text.firstIndex(of: separator) else { return (text, "") }
        return (text[..<position], text[text.index(after: position)...])
    }
}

extension Substring {
    func trimmingASCIIWhitespace() -> Substring {
        let trimmedStart = drop { $0 == " " || $0 == "\t" }
        return trimmedStart.trimmingASCIIWhitespaceSuffix()
    }

    func trimmingASCIIWhitespaceSuffix() -> Substring {
        var end = endIndex
        while end > startIndex, let last = self[..<end].last, last == " " || last == "\t" || last == "\r" {
            end = index(before: end)
        }
        return self[..<end]
    }
}

/// Edits to SDP text: ours before it is applied and sent, the far end's before it is applied.
enum SDPRewrite {
    /// The far end's description without its link-local candidates (`SDPInspection.isLinkLocalCandidate`):
    /// candidates written into the description, rather than trickled, would otherwise reach
    /// libnice, and a pair made of one dies with the interface it is on (a container's or a
    /// network lab's veth end) while ICE still says connected.
    static func removingLinkLocalCandidates(_ sdp: String) -> String {
        let lines = sdp.split(whereSeparator: \.isNewline)
        guard lines.contains(where: SDPInspection.isLinkLocalCandidate) else { return sdp }
        return lines.filter { !SDPInspection.isLinkLocalCandidate($0) }.joined(separator: "\r\n") + "\r\n"
    }

    /// GStreamer 1.22 hashes the whole PEM a transport was given (certificate and key) for
    /// `a=fingerprint`, so the line never matches the certificate the handshake presents and
    /// every peer that checks it (browsers, aiortc) refuses DTLS: write the real one.
    static func fingerprints(_ sdp: String, sha256 fingerprint: String) -> String {
        rewritingLines(sdp) { line in line.hasPrefix("a=fingerprint:") ? "a=fingerprint:sha-256 \(fingerprint)" : String(line) }
    }

    /// Adds `profile-level-id` to the H.264 `a=fmtp` line of `payloadType` when webrtcbin left it
    /// out (it drops it when the offer allows level asymmetry): without it a receiver assumes
    /// baseline level 1.0.
    static func addingProfileLevelID(_ sdp: String, payloadType: Int, profileLevelID: String) -> String {
        let prefix = "a=fmtp:\(payloadType) "
        guard profileLevelID.count == 6, profileLevelID.allSatisfy(\.isHexDigit) else { return sdp }
        return rewritingLines(sdp) { line in
            guard line.hasPrefix(prefix), !line.contains("profile-level-id") else { return String(line) }
            return String(line) + ";profile-level-id=" + profileLevelID
        }
    }

    /// `sdp` with the direction of its m-section number `index` (0-based) set to `inactive`:
    /// nothing flows either way in it, while the section (and the bundle it may lead) stays.
    static func inactivating(_ sdp: String, sectionIndex index: Int) -> String {
        var section = -1
        var written = false
        let directions: Set<Substring> = ["a=sendrecv", "a=sendonly", "a=recvonly", "a=inactive"]
        var lines: [String] = []
        for line in sdp.split(whereSeparator: \.isNewline) {
            if line.hasPrefix("m=") {
                if section == index, !written { lines.append("a=inactive") }
                section += 1
                written = false
            }
            if section == index, directions.contains(line) {
                if !written { lines.append("a=inactive") }
                written = true
                continue
            }
            lines.append(String(line))
        }
        if section == index, !written { lines.append("a=inactive") }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// `sdp` with an RTX format for every video codec of its video sections that has none:
    /// webrtcbin 1.22 gives a transceiver's offer RTX for its first codec only, so a far end that
    /// picked another one would get no resends. Each new RTX takes the codec's number plus one
    /// when that is free, else the lowest free dynamic number.
    static func addingRTXForEveryVideoCodec(_ sdp: String) -> String {
        let sections = SDPMediaSections.parse(sdp)
        var additions: [Int: [(rtx: Int, codec: Int)]] = [:]
        for section in sections where section.kind == .video && !section.isRejected {
            var used = Set(section.formats.map(\.payloadType))
            let protected = Set(section.formats.compactMap { $0.encodingName == "RTX" ? $0.parameters["apt"].flatMap(Int.init) : nil })
            for format in section.formats where !NegotiatedCodec.auxiliaryEncodings.contains(format.encodingName) && !format.encodingName.isEmpty
                && !protected.contains(format.payloadType) {
                guard let number = ([format.payloadType + 1] + Array(96...127)).first(where: { (96...127).contains($0) && !used.contains($0) }) else { break }
                used.insert(number)
                additions[section.index, default: []].append((number, format.payloadType))
            }
        }
        return appendingFormats(sdp, additions.mapValues { added in
            (added.map(\.rtx), added.flatMap { ["a=rtpmap:\($0.rtx) rtx/90000", "a=fmtp:\($0.rtx) apt=\($0.codec)"] })
        })
    }

    /// `answer` with every video format of `offer` that its video sections leave out appended
    /// after the answer's own (so its first format, the codec the answerer chose, stays first).
    /// libwebrtc answerers limited by `setCodecPreferences` answer one codec yet send with the
    /// offer's first one; webrtcbin receives only payload types of the remote description, so
    /// without them that video was dropped.
    static func addingOfferedVideoFormats(_ answer: String, offer: String) -> String {
        let offered = SDPMediaSections.parse(offer)
        var missing: [Int: [Int]] = [:]
        for section in SDPMediaSections.parse(answer) where section.kind == .video && !section.isRejected {
            guard let source = offered.first(where: { $0.index == section.index && $0.kind == .video }) else { continue }
            let present = Set(section.formats.map(\.payloadType))
            let absent = source.formats.map(\.payloadType).filter { !present.contains($0) }
            if !absent.isEmpty { missing[section.index] = absent }
        }
        let offerLines = offer.split(whereSeparator: \.isNewline)
        func attributes(of payloadType: Int) -> [String] {
            offerLines.filter { line in
                ["a=rtpmap:", "a=fmtp:", "a=rtcp-fb:"].contains { line.hasPrefix($0 + "\(payloadType) ") }
            }.map(String.init)
        }
        return appendingFormats(answer, missing.mapValues { ($0, $0.flatMap(attributes(of:))) })
    }

    /// `sdp` with payload types added to the `m=` line of the sections whose index `additions`
    /// names, and their attribute lines added at the end of those sections; unchanged without any.
    private static func appendingFormats(_ sdp: String, _ additions: [Int: (payloadTypes: [Int], lines: [String])]) -> String {
        guard !additions.isEmpty else { return sdp }
        var index = -1
        var lines: [String] = []
        for line in sdp.split(whereSeparator: \.isNewline) {
            if line.hasPrefix("m=") {
                lines.append(contentsOf: additions[index]?.lines ?? [])
                index += 1
                if let added = additions[index] {
                    lines.append(String(line) + added.payloadTypes.map { " \($0)" }.joined())
                    continue
                }
            }
            lines.append(String(line))
        }
        lines.append(contentsOf: additions[index]?.lines ?? [])
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// SDP lines end in CRLF, which Swift reads as one Character: split on any line end and
    /// write CRLF back.
    private static func rewritingLines(_ sdp: String, _ change: (Substring) -> String) -> String {
        sdp.split(whereSeparator: \.isNewline).map(change).joined(separator: "\r\n") + "\r\n"
    }
}
