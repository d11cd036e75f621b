/// Chooses the video encoder for a codec from what the catalog has, and says why.
///
/// With hardware acceleration asked for, installed hardware encoders for the codec win, highest
/// registry rank first, ties broken by `VideoEncoderProfile.hardware` order; one whose helper
/// element is missing is skipped. Otherwise (or when none is usable) the software encoders are
/// tried in preference order. Nothing is ever substituted silently: the decision line names the
/// choice, what was passed over and why.
struct EncoderSelection {
    var profile: VideoEncoderProfile
    var decision: String

    static func choose(codec: VideoCodec, hardwareAllowed: Bool, catalog: any ElementCatalog) throws(PipelineCompileError) -> EncoderSelection {
        let hardwareCandidates = VideoEncoderProfile.hardware.filter { $0.codec == codec }
        var notes: [String] = []
        let installedHardware = hardwareCandidates.enumerated().compactMap { index, profile -> (Int, Int, VideoEncoderProfile)? in
            catalog.factory(named: profile.factory).map { ($0.rank, index, profile) }
        }
        if hardwareAllowed {
            let ranked = installedHardware.sorted { ($0.0, -$0.1) > ($1.0, -$1.1) }
            var usable: [(Int, VideoEncoderProfile)] = []
            for (rank, _, profile) in ranked {
                if let missing = profile.upload.first(where: { !catalog.contains($0.factory) }) {
                    notes.append("\(profile.factory) skipped: it needs \(missing.factory), which is not installed")
                } else {
                    usable.append((rank, profile))
                }
            }
            if let (rank, chosen) = usable.first {
                var line = "video encoder: \(chosen.factory) (hardware, rank \(rank)) for \(codec.rawValue)"
                let others = usable.dropFirst().map { "\($0.1.factory) (rank \($0.0))" }
                if !others.isEmpty { line += "; also installed: " + others.joined(separator: ", ") }
                if !notes.isEmpty { line += "; " + notes.joined(separator: "; ") }
                return EncoderSelection(profile: chosen, decision: line)
            }
            let names = hardwareCandidates.map(\.factory).joined(separator: ", ")
            notes.insert(installedHardware.isEmpty
                ? "hardware requested but none of \(names) is installed, falling back to software"
                : "hardware requested but no usable hardware encoder, falling back to software", at: 0)
        } else {
            var line = "hardware acceleration off (videoCodecHwAcceleration=false)"
            if !installedHardware.isEmpty {
                line += "; installed but unused: " + installedHardware.map(\.2.factory).joined(separator: ", ")
            }
            notes.append(line)
        }
        let softwareCandidates = VideoEncoderProfile.software.filter { $0.codec == codec }
        for profile in softwareCandidates {
            if catalog.contains(profile.factory) {
                return EncoderSelection(profile: profile, decision: "video encoder: \(profile.factory) (software) for \(codec.rawValue); " + notes.joined(separator: "; "))
            }
            notes.append("\(profile.factory) is not installed (\(DebianPackages.package(for: profile.factory)))")
        }
        throw .noEncoderInstalled(codec: codec.rawValue, candidates: softwareCandidates.map { "\($0.factory) (\(DebianPackages.package(for: $0.factory)))" })
    }
}
