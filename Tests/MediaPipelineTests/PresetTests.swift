import Foundation
@testable import MediaPipeline
import Testing

@Suite("Presets")
struct PresetTests {
    static let presetDirectory = Fixtures.pipelinesDirectory.appendingPathComponent("presets")

    @Test("built-in presets parse and include the documented names")
    func builtIns() {
        let names = PresetLibrary.builtIn.names
        for name in ["smpte-live", "ball", "black", "tone-440", "webcam", "silence", "speaker"] { #expect(names.contains(name)) }
        #expect(PresetLibrary.builtIn.preset(named: "webcam")?.elements == [.element(factory: "v4l2src", properties: [NodeProperty("device", .serialized("/dev/video0"))])])
    }

    @Test("pipelines/presets holds exactly the built-ins, byte for byte")
    func directoryMatchesBuiltIns() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.presetDirectory.path).filter { $0.hasSuffix(".pipeline") }
        #expect(Set(files) == Set(PresetLibrary.builtInFiles.map { "\($0.name).pipeline" }))
        for (name, text) in PresetLibrary.builtInFiles {
            let file = try String(contentsOf: Self.presetDirectory.appendingPathComponent("\(name).pipeline"), encoding: .utf8)
            #expect(file == text, "\(name).pipeline differs from the built-in")
        }
        #expect(try PresetLibrary.loading(directory: Self.presetDirectory, over: try PresetLibrary([])) == PresetLibrary.builtIn)
    }

    @Test("a user's preset directory adds and overrides presets without recompiling")
    func userDirectory() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ecv-presets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "# Green, small.\n# kind: video-source\nvideotestsrc is-live=true pattern=green ! video/x-raw,width=320,height=240\n"
            .write(to: directory.appendingPathComponent("green.pipeline"), atomically: true, encoding: .utf8)
        try "# kind: video-source\nvideotestsrc is-live=true pattern=snow\n"
            .write(to: directory.appendingPathComponent("black.pipeline"), atomically: true, encoding: .utf8)
        try "ignored".write(to: directory.appendingPathComponent("README.txt"), atomically: true, encoding: .utf8)

        let library = try PresetLibrary.loading(directory: directory)
        #expect(library.preset(named: "black")?.launch == "videotestsrc is-live=true pattern=snow")
        #expect(library.preset(named: "ball") != nil)
        let graph = try PipelineCompiler(catalog: Fixtures.software, presets: library)
            .compileSend(parameters: MediaParameters(), video: .single(.preset(name: "green")))
        #expect(Array(graph.factories.prefix(3)) == ["videotestsrc", "capsfilter", "videoconvert"])
        #expect(graph.node("video_src")?[property: "pattern"] == .serialized("green"))
        #expect(graph.node("video_src1")?[property: "caps"] == .caps("video/x-raw,width=320,height=240"))
        #expect(graph.launchDescription.hasPrefix("videotestsrc name=video_src is-live=true pattern=green ! capsfilter name=video_src1 caps=\"video/x-raw,width=320,height=240\" ! videoconvert"))
    }

    @Test("an invalid preset file fails the load, naming the file")
    func invalidFileFailsLoad() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ecv-presets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "videotestsrc\n".write(to: directory.appendingPathComponent("nokind.pipeline"), atomically: true, encoding: .utf8)
        let failure = compileError { () throws(PipelineCompileError) in _ = try PresetLibrary.loading(directory: directory) }
        guard case .invalidPreset("nokind", let reason)? = failure else { Issue.record("wrong result \(String(describing: failure))"); return }
        #expect(reason.contains("kind"))
    }

    @Test("preset syntax errors name the problem",
          arguments: [("# kind: video-source\nvideotestsrc name=x\n", "name="),
                      ("# kind: video-source\nvideotestsrc ! src.\n", "references"),
                      ("# kind: video-source\nvideotestsrc pattern=\"ball\n", "quote"),
                      ("# kind: video-source\nvideotestsrc !  ! fakesink\n", "empty"),
                      ("# kind: camera\nv4l2src\n", "unknown kind"),
                      ("# kind: video-source\nvideotestsrc pattern\n", "property=value"),
                      // Found by the `preset` fuzz target: the quote went into the property name.
                      ("# kind: video-source\nvideo \"video/x-raw,format=(string)I420\"\n", "not a property name"),
                      ("# kind: video-source\nvideotestsrc 9lives=1\n", "not a property name")])
    func syntaxErrors(text: String, expected: String) {
        let failure = compileError { () throws(PipelineCompileError) in _ = try Preset.parse(name: "bad", text: text) }
        #expect(failure?.description.contains(expected) == true, "\(String(describing: failure))")
    }

    @Test("preset names are lowercase with dashes")
    func names() {
        #expect(compileError { () throws(PipelineCompileError) in _ = try Preset.parse(name: "My Preset", text: "# kind: video-source\nvideotestsrc") } != nil)
    }

    /// Found by the `preset` fuzz target: CRLF files were one line (a comment, so "missing a kind"),
    /// and a bare "#" line put a leading space into the summary that `fileText` could not keep.
    @Test("CRLF line ends and bare comment lines read like LF ones")
    func lineEndsAndBareComments() throws {
        let lf = try Preset.parse(name: "ball", text: "#\n# A ball.\n#\n# kind: video-source\nvideotestsrc pattern=ball\n")
        #expect(lf.summary == "A ball.")
        #expect(try Preset.parse(name: "ball", text: "#\r\n# A ball.\r\n#\r\n# kind: video-source\r\nvideotestsrc pattern=ball\r\n") == lf)
        #expect(try Preset.parse(name: "ball", text: lf.fileText) == lf)
    }

    /// Found by the `preset` fuzz target: a comment beginning with a combining mark (after the
    /// spaces and carriage returns trimmed from it) read back differently from `fileText`, where
    /// "# " put a space in front of the mark and Character-wise trimming kept the pair.
    @Test("a comment beginning with a combining mark reads back from fileText")
    func combiningMarkAfterTheCommentSpace() throws {
        let preset = try Preset.parse(name: "ball", text: "# \r\r\u{301}\rA ball.\n# kind: video-source\nvideotestsrc pattern=ball\n")
        #expect(preset.summary.unicodeScalars.first == "\u{301}")
        #expect(try Preset.parse(name: "ball", text: preset.fileText) == preset)
    }

    /// Found by the `preset` fuzz target: quotes and backslashes were handled per Character, and
    /// a combining mark right after one joins it into another Character (gst-launch reads bytes).
    @Test("quoting reads back scalar by scalar")
    func combiningMarksAfterQuotes() throws {
        for value in ["\u{355}", "a\\\u{301}", "\"\u{301}x", "x y\u{301}"] {
            #expect(PresetParser.unquoted(LaunchQuoting.quoted(value)) == value)
            #expect(PresetParser.unquoted(PropertyValue.serialized(value).launchText) == value)
        }
        #expect(LaunchQuoting.quoted("a\\\u{301}") == "\"a\\\\\u{301}\"")
        let preset = try Preset.parse(name: "t", text: "# kind: video-source\ntextoverlay text=\"\u{301}x\" ! fakesink")
        #expect(preset.elements.first == .element(factory: "textoverlay", properties: [NodeProperty("text", .serialized("\u{301}x"))]))
    }

    @Test("quoted values survive parsing and re-rendering")
    func quotedValues() throws {
        let preset = try Preset.parse(name: "clip", text: "# kind: video-source\nfilesrc location=\"/tmp/my clip.mkv\" ! decodebin")
        #expect(preset.elements.first == .element(factory: "filesrc", properties: [NodeProperty("location", .serialized("/tmp/my clip.mkv"))]))
        #expect(NodeProperty("location", .serialized("/tmp/my clip.mkv")).value.launchText == "\"/tmp/my clip.mkv\"")
        #expect(try Preset.parse(name: "clip", text: preset.fileText) == preset)
    }
}
