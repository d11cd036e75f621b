// libFuzzer target `preset`: the preset files users drop into pipelines/presets (the linear
// gst-launch subset of Sources/MediaPipeline/PresetParser.swift) and what the compiler makes of
// them. Input: the preset's name (its file name without `.pipeline`) on the first line, then the
// file's text. MediaPipeline is linked with @testable for PresetParser and LaunchQuoting.
// Properties: a parsed preset obeys the syntax's own rules (factory names, no `name=`), its
// `fileText` parses back to an equal preset (as documented), its launch parses back to the same
// elements, line ends do not matter (LF or CRLF), quoting for gst-launch text reads back to the
// same value, and a graph compiled with the preset renders gst-launch text whose every value
// reads back.
import Foundation
@testable import MediaPipeline

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPreset(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let (head, text) = input.firstIndex(of: "\n").map { (String(input[..<$0]), String(input[input.index(after: $0)...])) } ?? (input, "")
    checkQuoting(text)
    let parsed = try? Preset.parse(name: head, text: text)
    if !text.contains("\r") {
        let crlf = try? Preset.parse(name: head, text: text.replacingOccurrences(of: "\n", with: "\r\n"))
        guard crlf == parsed else { fatalError("CRLF line ends read differently: \(String(describing: parsed)) vs \(String(describing: crlf))") }
    }
    guard let preset = parsed else { return 0 }
    guard !preset.elements.isEmpty, preset.name == head else { fatalError("an empty chain parsed") }
    for element in preset.elements {
        guard case .element(let factory, let properties) = element else { continue }
        guard !factory.isEmpty, factory.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || "-_".unicodeScalars.contains($0) }),
              properties.allSatisfy({ property in
                  property.name != "name" && property.name.first?.isLetter == true
                      && property.name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_".unicodeScalars.contains($0)) }
              }) else {
            fatalError("the parser accepted \(element)")
        }
        for property in properties { if case .serialized(let value) = property.value { checkQuoting(value) } }
    }
    let reread: Preset
    do { reread = try Preset.parse(name: preset.name, text: preset.fileText) } catch {
        fatalError("fileText does not parse: \(error)\n\(preset.fileText.debugDescription)")
    }
    guard reread == preset else { fatalError("fileText reads back differently:\n\(preset)\n\(reread)") }
    guard (try? PresetParser.parseChain(preset.launch, presetName: preset.name)) == preset.elements else { fatalError("launch reparsed differently") }
    compile(preset)
    return 0
}

/// What `ecv pipeline` and the runtime's gst-launch text rely on.
private func checkQuoting(_ value: String) {
    let quoted = LaunchQuoting.quoted(value), maybe = LaunchQuoting.quotedIfNeeded(value)
    guard PresetParser.unquoted(quoted) == value, PresetParser.unquoted(maybe) == value else {
        fatalError("quoting does not read back: \(value.debugDescription) → \(quoted.debugDescription)")
    }
    for separator: Unicode.Scalar in [" ", "!"] {
        guard (try? PresetParser.splitOutsideQuotes(maybe, separator: separator, presetName: "q"))?.count == 1 else {
            fatalError("\(maybe.debugDescription) splits on \(separator.debugDescription)")
        }
    }
}

private func compile(_ preset: Preset) {
    let factories = preset.elements.compactMap { if case .element(let factory, _) = $0 { factory } else { nil } }
    let catalog = StaticCatalog.debian12Software.adding(factories.map { CatalogEntry(name: $0, rank: 0, klass: "Fuzz") })
    let library = PresetLibrary.builtIn.overriding(with: [preset])
    let compiler = PipelineCompiler(catalog: catalog, presets: library)
    let parameters = MediaParameters()
    var rendered: [(nodes: [PipelineNode], launch: String)] = []
    switch preset.kind {
    case .videoSource:
        if let graph = try? compiler.compileSend(parameters: parameters, video: .preset(name: preset.name)) {
            rendered.append((graph.nodes, graph.launchDescription))
            _ = graph.launchDescription(testRun: true)
            _ = graph.dot
        }
    case .audioSource:
        if let graph = try? compiler.compileSend(parameters: parameters, video: .testPattern(), audio: .preset(name: preset.name)) {
            rendered.append((graph.nodes, graph.launchDescription))
            _ = graph.launchDescription(testRun: true)
        }
    case .videoSink, .audioSink:
        let kind: MediaKind = preset.kind == .videoSink ? .video : .audio
        if let fragment = try? compiler.compileReceive(kind: kind, encodingName: kind == .video ? "VP8" : "OPUS",
                                                       sink: .preset(name: preset.name), parameters: parameters) {
            rendered.append((fragment.nodes, fragment.launchDescription))
            _ = fragment.testRunLaunchDescription(feed: "fakesrc")
            _ = fragment.dot
        }
    }
    for (nodes, launch) in rendered {
        guard (try? PresetParser.splitOutsideQuotes(launch, separator: "!", presetName: "graph")) != nil else {
            fatalError("unbalanced quotes in \(launch.debugDescription)")
        }
        for factory in factories where !nodes.contains(where: { $0.factory == factory }) { fatalError("\(factory) missing from the graph") }
        for node in nodes {
            for property in node.properties {
                switch property.value {
                case .string(let value), .enumNick(let value), .serialized(let value):
                    guard PresetParser.unquoted(property.value.launchText) == value else { fatalError("\(node.id).\(property.name) does not read back") }
                default: break
                }
            }
        }
    }
}
