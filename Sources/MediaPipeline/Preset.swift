/// What a preset provides, declared by its `# kind:` line.
public enum PresetKind: String, Sendable, Hashable, CaseIterable {
    case videoSource = "video-source"
    case audioSource = "audio-source"
    case videoSink = "video-sink"
    case audioSink = "audio-sink"
}

/// A named, user-editable source or sink: a linear gst-launch chain stored in
/// `pipelines/presets/<name>.pipeline`.
///
/// File format: `#` lines are comments; one of them must be `# kind: <video-source|audio-source|
/// video-sink|audio-sink>`; the other lines, joined with spaces, are the chain, e.g.
/// `videotestsrc is-live=true pattern=ball`. Chains are linear (`a ! b ! caps ! c`), may not set
/// `name=` (the compiler names nodes) and may not use references or bins.
public struct Preset: Sendable, Hashable {
    public var name: String
    public var kind: PresetKind
    /// The comment lines, for humans and `ecv pipeline --list`.
    public var summary: String
    /// The chain as written (comments removed, lines joined).
    public var launch: String
    /// The parsed chain.
    public var elements: [PresetElement]

    /// Parses a preset file's text. `name` is the file name without `.pipeline`.
    public static func parse(name: String, text: String) throws(PipelineCompileError) -> Preset {
        try PresetParser.validateName(name)
        var kind: PresetKind?
        var comments: [String] = []
        var chainLines: [String] = []
        // LF or CRLF: Swift reads "\r\n" as one Character, so splitting on "\n" alone would leave a
        // CRLF file one long line (a comment without its kind).
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            let line = rawLine.trimmingASCIIWhitespace()
            if line.isEmpty { continue }
            if line.hasPrefix("#") {
                let comment = String(line.dropFirst()).trimmingASCIIWhitespace()
                if comment.hasPrefix("kind:") {
                    let value = String(comment.dropFirst("kind:".count)).trimmingASCIIWhitespace()
                    guard let parsed = PresetKind(rawValue: value) else {
                        throw .invalidPreset(name: name, reason: "unknown kind \"\(value)\"; use one of \(PresetKind.allCases.map(\.rawValue).joined(separator: ", "))")
                    }
                    kind = parsed
                } else if !comment.isEmpty {
                    // A bare "#" spacer adds nothing (and would put a space `fileText` cannot keep).
                    comments.append(comment)
                }
            } else {
                chainLines.append(line)
            }
        }
        guard let kind else {
            throw .invalidPreset(name: name, reason: "missing a \"# kind: …\" line (\(PresetKind.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        let launch = chainLines.joined(separator: " ")
        let elements = try PresetParser.parseChain(launch, presetName: name)
        return Preset(name: name, kind: kind, summary: comments.joined(separator: " "), launch: launch, elements: elements)
    }

    /// The preset as file text, which `parse` reads back to an equal preset.
    public var fileText: String {
        (summary.isEmpty ? "" : "# \(summary)\n") + "# kind: \(kind.rawValue)\n" + launch + "\n"
    }
}

/// One element (or caps filter) of a preset chain.
public enum PresetElement: Sendable, Hashable {
    case element(factory: String, properties: [NodeProperty])
    case caps(String)
}

extension StringProtocol {
    /// Trims by Unicode scalar, not by Character: a space followed by a combining mark is one
    /// Character, so a comment beginning with a combining mark lost its space on the first reading
    /// and kept it on the second, once `fileText` had written "# " before it (found by fuzzing).
    func trimmingASCIIWhitespace() -> String {
        let scalars = unicodeScalars
        let isSpace: (Unicode.Scalar) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        guard let start = scalars.firstIndex(where: { !isSpace($0) }), let end = scalars.lastIndex(where: { !isSpace($0) }) else { return "" }
        var trimmed = String.UnicodeScalarView()
        trimmed.append(contentsOf: scalars[start...end])
        return String(trimmed)
    }
}
