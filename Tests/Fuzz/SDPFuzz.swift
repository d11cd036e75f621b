// libFuzzer target `sdp`: the Swift code that reads session descriptions received from a remote
// peer (Sources/WebRTC: SDPMediaSections, OfferedFormats, SDPInspection, SDPRewrite; compiled in,
// MediaPipeline linked). Input: a remote description, optionally followed by a NUL byte and the
// other side's description (the answer, or the competing offer in glare).
// Properties: the parser's own bounds hold (sections, formats, payload types, clock rates,
// extension ids, candidates' ports and addresses); a chosen send format is one the section
// offers, for our codec and clock rate, with the packetization we can send; codec preferences
// carry nothing the offer injected; the rewrites of our own SDP are idempotent and leave every
// other parsed value alone; the glare rule picks exactly one winner for two different session ids.
import Foundation
import MediaPipeline

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSDP(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let split = bytes.firstIndex(of: 0)
    let offer = String(decoding: bytes[..<(split ?? size)], as: UTF8.self)
    let other = split.map { String(decoding: bytes[($0 + 1)...], as: UTF8.self) }

    // The remote description: everything. The other side's: what is read from an answer.
    let sections = SDPMediaSections.parse(offer)
    checkBounds(sections, offer)
    for section in sections { checkChoices(section) }
    checkRewrites(offer, sections)
    checkInspection(offer)
    for sdp in [offer] + (other.map { [$0] } ?? []) {
        if sdp != offer { checkBounds(SDPMediaSections.parse(sdp), sdp) }
        for (kind, codec) in NegotiatedCodec.from(answer: sdp) {
            guard codec.kind == kind, (0...127).contains(codec.payloadType), !codec.encodingName.isEmpty, codec.clockRate > 0,
                  !["RTX", "RED", "ULPFEC", "FLEXFEC-03", "CN", "TELEPHONE-EVENT"].contains(codec.encodingName) else {
                fatalError("negotiated \(codec) for \(kind)")
            }
        }
    }
    if let other {
        _ = SDPInspection.rejectedMedia(offer: offer, answer: other)
        if let ours = SDPInspection.sessionID(offer), let theirs = SDPInspection.sessionID(other) {
            let oursWins = SDPInspection.sessionIDOrder(ours, theirs), theirsWins = SDPInspection.sessionIDOrder(theirs, ours)
            if ours == theirs ? (oursWins || theirsWins) : (oursWins == theirsWins) {
                fatalError("glare between \(ours.debugDescription) and \(theirs.debugDescription): \(oursWins)/\(theirsWins)")
            }
        }
    }
    return 0
}

private func checkBounds(_ sections: [SDPMediaSection], _ sdp: String) {
    if sdp.utf8.count > SDPMediaSections.maxLength, !sections.isEmpty { fatalError("an oversized SDP was parsed") }
    guard sections.count <= SDPMediaSections.maxSections else { fatalError("\(sections.count) sections") }
    for (index, section) in sections.enumerated() {
        guard section.index == index, section.formats.count <= SDPMediaSections.maxFormats,
              section.extensions.count <= 32, section.extensions.keys.allSatisfy({ (1...255).contains($0) }),
              section.isRejected == (section.port == 0 && !section.isBundleOnly) else {
            fatalError("section \(index) out of bounds: \(section)")
        }
        for format in section.formats {
            guard (0...127).contains(format.payloadType), format.feedback.count <= 16,
                  format.clockRate == 0 ? format.encodingName.isEmpty : (1...1_000_000).contains(format.clockRate) && !format.encodingName.isEmpty,
                  format.encodingName == format.encodingName.uppercased(),
                  format.parameters.keys.allSatisfy({ !$0.isEmpty && $0 == $0.lowercased() }) else {
                fatalError("format out of bounds: \(format) \(format.parameters) \(format.feedback)")
            }
        }
    }
}

private func checkChoices(_ section: SDPMediaSection) {
    let kind = section.kind ?? .video
    for name in ["VP8", "VP9", "H264", "OPUS", "vp8"] { _ = OfferedFormats.mismatch(encodingName: name, kind: kind, in: section) }
    var chosen: [SDPFormat] = []
    if let opus = OfferedFormats.choose(encodingName: "OPUS", in: section) {
        guard section.formats.contains(opus), opus.encodingName == "OPUS", opus.clockRate == 48000 else { fatalError("chose \(opus) for OPUS") }
        chosen.append(opus)
    }
    // Every codec at once (the offer's order decides) and each one alone (an allowlist).
    let preferences = [VideoCodecPreference(codecs: VideoCodec.allCases, restricted: false)]
        + VideoCodec.allCases.map { VideoCodecPreference(codecs: [$0], restricted: true) }
    for preference in preferences {
        guard let (codec, format) = OfferedFormats.chooseVideo(in: section, from: preference) else { continue }
        guard preference.codecs.contains(codec), section.formats.contains(format), format.encodingName == codec.rawValue,
              format.clockRate == VideoCodec.clockRate else { fatalError("chose \(format) as \(codec) from \(preference)") }
        // No earlier format of the section is one of the preference's codecs that would do.
        if let earlier = section.formats.prefix(while: { $0 != format }).first(where: { candidate in
            candidate.clockRate == VideoCodec.clockRate && VideoCodec(rawValue: candidate.encodingName).map(preference.codecs.contains) == true
                && VideoCodec(rawValue: candidate.encodingName) != codec
                && OfferedFormats.chooseVideo(in: SDPMediaSection(index: 0, media: "video", port: 9, mid: nil, formats: [candidate], extensions: [:]),
                                              from: preference) != nil
        }) {
            fatalError("chose \(format) although \(earlier) comes first")
        }
        switch codec {
        case .h264:
            let mode = format.parameters["packetization-mode"]
            let usable = section.formats.filter { $0.encodingName == "H264" && $0.clockRate == VideoCodec.clockRate && OfferedFormats.h264Profile($0)?.carriesOurStream == true }
            let offersMode1 = usable.contains { $0.clockRate == VideoCodec.clockRate && $0.parameters["packetization-mode"] == "1" }
            guard mode == "1" || (mode == nil && !offersMode1) else { fatalError("H.264 packetization-mode \(mode ?? "nil")") }
            guard OfferedFormats.h264Profile(format)?.carriesOurStream == true else { fatalError("H.264 profile \(format.parameters)") }
        case .vp9:
            if (format.parameters["profile-id"] ?? "0") != "0" { fatalError("VP9 profile \(format.parameters)") }
        case .vp8:
            break
        }
        chosen.append(format)
    }
    for format in chosen {
        // webrtcbin parses these caps: nothing from the offer but numbers and our own names.
        let caps = OfferedFormats.codecPreferences(for: format, kind: kind, in: section)
            .replacingOccurrences(of: OfferedFormats.transportWideCCURI, with: "")
        guard caps.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "/=,-()".unicodeScalars.contains($0)) }),
              caps.split(separator: ",").count <= 8 else {
            fatalError("codec preferences \(caps.debugDescription)")
        }
    }
}

private func checkRewrites(_ sdp: String, _ sections: [SDPMediaSection]) {
    // Our own rewrites of a description: RTX for every video codec once, the offered formats kept
    // after an answer's own (its first format still first), a refused section made inactive.
    if sdp.utf8.count <= 16 * 1024 {
        let withRTX = SDPRewrite.addingRTXForEveryVideoCodec(sdp)
        guard SDPRewrite.addingRTXForEveryVideoCodec(withRTX) == withRTX else { fatalError("RTX rewrite not idempotent") }
        let kept = SDPRewrite.addingOfferedVideoFormats(sdp, offer: withRTX)
        for (before, after) in zip(sections, SDPMediaSections.parse(kept)) where before.kind == .video && !before.isRejected {
            guard after.formats.first?.payloadType == before.formats.first?.payloadType else { fatalError("the answer's first format moved") }
        }
        if !sections.isEmpty, let first = SDPMediaSections.parse(SDPRewrite.inactivating(sdp, sectionIndex: 0)).first,
           first.direction != "inactive" { fatalError("section 0 not inactive") }
    }
    let fingerprint = "AB:CD:EF:01:23:45:67:89"
    let once = SDPRewrite.fingerprints(sdp, sha256: fingerprint)
    guard SDPRewrite.fingerprints(once, sha256: fingerprint) == once else { fatalError("fingerprint rewrite not idempotent") }
    if once.utf8.count <= SDPMediaSections.maxLength, SDPMediaSections.parse(once) != sections {
        fatalError("the fingerprint rewrite changed the media sections")
    }
    // The H.264 format an answer would name, else any: one payload type (each rewrite is a pass
    // over the whole text).
    let formats = sections.flatMap(\.formats)
    for payloadType in [(formats.first { $0.encodingName == "H264" } ?? formats.first)?.payloadType].compactMap({ $0 }) {
        let added = SDPRewrite.addingProfileLevelID(sdp, payloadType: payloadType, profileLevelID: "42e01f")
        guard SDPRewrite.addingProfileLevelID(added, payloadType: payloadType, profileLevelID: "42e01f") == added else {
            fatalError("profile-level-id rewrite not idempotent for \(payloadType)")
        }
        guard added.utf8.count <= SDPMediaSections.maxLength else { continue }
        let others = { (list: [SDPMediaSection]) in list.map { section in section.formats.filter { $0.payloadType != payloadType } } }
        if others(SDPMediaSections.parse(added)) != others(sections) { fatalError("profile-level-id rewrite changed other formats") }
    }
}

private func checkInspection(_ sdp: String) {
    let mLines = sdp.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("m=") }.count
    guard SDPInspection.mids(sdp).keys.allSatisfy({ (0..<mLines).contains($0) }) else { fatalError("a mid for a missing m-line") }
    _ = SDPInspection.ssrcKinds(sdp)
    _ = SDPInspection.includes(kinds: ["audio", "video"], sdp)
    _ = SDPInspection.iceUfrag(sdp)
    // Candidates (the connectivity nudges send to them): a UDP port, an address of IP literal
    // characters only, each one what its own line reads as.
    let candidateLines = sdp.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("a=candidate:") }
    let candidates = SDPInspection.udpCandidates(sdp)
    guard candidates == candidateLines.compactMap({ SDPInspection.udpCandidate($0) }) else { fatalError("candidates read twice differ") }
    for candidate in candidates {
        guard candidate.port != 0, !candidate.type.isEmpty, !candidate.address.isEmpty, candidate.address.utf8.count <= 45,
              candidate.address.allSatisfy({ $0.isHexDigit || $0 == "." || $0 == ":" }) else { fatalError("candidate \(candidate)") }
    }
}
