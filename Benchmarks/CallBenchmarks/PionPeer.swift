import BenchmarkSupport
import Foundation

/// The Pion side of `bench-call cost` (`Benchmarks/pion`, Go, benchmark-only): agent bots that
/// record with Pion's IVF/Ogg writers or drop the media, and callers that send the same
/// pre-encoded clip, speaking the same lines to this process as `cost-agents` and `load`.
/// Built by `Benchmarks/pion/build.sh` against Debian's Pion when the benchmark runs.
enum PionPeer {
    /// Builds the peer and answers its path; throws with the script's one line when Go or
    /// Debian's Pion is missing (`make bench-deps`).
    static func build() throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["Benchmarks/pion/build.sh"]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let path = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchmarkError.badInput("Benchmarks/pion/build.sh failed: " + message.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return path.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Writes `clip` as the peer reads it (`Benchmarks/pion/clip.go`): records of a kind byte
    /// (`K` a key frame, `D` another frame, `A` an Opus packet), a big-endian UInt32 length, the bytes.
    static func write(_ clip: EncodedClip, to url: URL) throws {
        var data = Data()
        func record(_ kind: Character, _ bytes: [UInt8]) {
            data.append(kind.asciiValue ?? 0)
            withUnsafeBytes(of: UInt32(bytes.count).bigEndian) { data.append(contentsOf: $0) }
            data.append(contentsOf: bytes)
        }
        for frame in clip.video { record(frame.isKeyFrame ? "K" : "D", frame.bytes) }
        for packet in clip.audio { record("A", packet) }
        try data.write(to: url)
    }
}

/// What the Pion runs of one `bench-call cost` share: the built peer and the clip its callers send
/// (the load generator's clip, encoded once here and written for the Go side).
struct PionRun: Sendable {
    var executable: String
    var clip: URL

    static func prepare(work: URL) async throws -> PionRun {
        let executable = try PionPeer.build()
        let size = CallCostBenchmark.callSize
        let clip = try await EncodedClip.encode(codec: "VP8", width: size.width, height: size.height, fps: size.fps, seconds: 10, kbps: 300)
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let file = work.appendingPathComponent("pion-clip.bin")
        try PionPeer.write(clip, to: file)
        return PionRun(executable: executable, clip: file)
    }
}
