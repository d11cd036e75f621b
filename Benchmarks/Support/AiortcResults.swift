import Foundation

/// What `Benchmarks/aiortc/encode_bench.py` writes: per-frame times of aiortc's own encoders on
/// the same raw frames our pipeline encoded.
package struct AiortcResults: Codable, Sendable {
    package struct Codec: Codable, Sendable {
        package var codec: String
        package var implementation: String
        /// Wall time of each `encoder.encode(frame)` call, in milliseconds.
        package var encode_ms: [Double]
        package var cpu_ms_per_frame: Double
    }

    package var aiortc: String
    package var av: String
    package var frames: Int
    package var width: Int
    package var height: Int
    package var kbps: Int
    package var paced: Bool
    package var results: [Codec]

    package static func read(_ path: String) throws -> AiortcResults {
        do {
            return try JSONDecoder().decode(AiortcResults.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw BenchmarkError.badInput("cannot read the aiortc results \(path): \(error)")
        }
    }
}

extension PeerSection {
    /// Adds aiortc's figures; refuses results taken on other frames than ours.
    package mutating func add(_ aiortc: AiortcResults) throws {
        guard aiortc.frames == frames, aiortc.width == width, aiortc.height == height, aiortc.kbps == kbps else {
            throw BenchmarkError.badInput("aiortc encoded \(aiortc.frames) frames of \(aiortc.width)×\(aiortc.height) at \(aiortc.kbps) kbit/s, "
                + "ours \(frames) of \(width)×\(height) at \(kbps) kbit/s: not the same input")
        }
        self.aiortc = aiortc.results.map { result in
            PeerFigure(codec: result.codec, implementation: result.implementation,
                       perFrame: LatencySummary(milliseconds: result.encode_ms), encoderOnly: nil,
                       cpuMsPerFrame: result.cpu_ms_per_frame)
        }
        aiortcVersion = "aiortc \(aiortc.aiortc), PyAV \(aiortc.av)" + (aiortc.paced ? ", calls paced at 30 fps" : ", calls back to back")
    }
}
