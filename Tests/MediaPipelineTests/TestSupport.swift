import Foundation
@testable import MediaPipeline

/// Catalogs and helpers shared by the MediaPipeline tests.
enum Fixtures {
    static let software = StaticCatalog.debian12Software

    /// Every hardware encoder the compiler knows, at one rank so the fixed preference decides,
    /// plus `nvvidconv` for the Jetson encoder: a machine that has everything.
    static let allHardwareEncoders: [String] = VideoEncoderProfile.hardware.map(\.factory)
    static let hardware = software.adding(allHardwareEncoders.map { CatalogEntry(name: $0, rank: 256, klass: "Codec/Encoder/Video/Hardware") }
                                          + [CatalogEntry(name: "nvvidconv", rank: 0, klass: "Filter/Converter/Video")])

    /// The software catalog plus exactly one hardware encoder (and nvvidconv when it needs it).
    static func softwarePlus(_ factory: String, rank: Int = 256) -> StaticCatalog {
        var extra = [CatalogEntry(name: factory, rank: rank, klass: "Codec/Encoder/Video/Hardware")]
        if factory == "nvv4l2h264enc" { extra.append(CatalogEntry(name: "nvvidconv", rank: 0, klass: "Filter/Converter/Video")) }
        return software.adding(extra)
    }

    static func compile(_ parameters: MediaParameters = MediaParameters(), catalog: StaticCatalog = software,
                        video: VideoInputs = .single(.testPattern()), audio: AudioSourceSpec = .testTone()) throws -> PipelineGraph {
        try PipelineCompiler(catalog: catalog).compileSend(parameters: parameters, video: video, audio: audio)
    }

    /// `pipelines/` in the source tree, found from this file's path.
    static let pipelinesDirectory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("pipelines")
}

extension PipelineGraph {
    var factories: [String] { nodes.map(\.factory) }
}

/// The error a throwing expression threw, typed, or nil.
func compileError(_ body: () throws(PipelineCompileError) -> Void) -> PipelineCompileError? {
    do {
        try body()
        return nil
    } catch {
        return error
    }
}
