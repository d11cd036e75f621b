import GStreamer
import MediaPipeline
import MediaRuntime

/// `ecv doctor`: what this machine's GStreamer offers for calls.
enum DoctorCommand {
    static let usage = "ecv doctor               list codecs, encoders (hardware and software) and features available here"

    static func run(_ words: [String]) throws(CLIError) {
        let arguments = try Arguments(words, flags: [])
        try arguments.finish()
        do { try GStreamerRuntime.ensureInitialized() } catch { throw .failed("GStreamer: \(error)") }
        let catalog = LiveCatalog.shared
        print("GStreamer: \(GStreamerRuntime.versionString)")
        print("Audio output device: \(HeadlessAudio.outputAvailable ? "yes" : "none (far-end audio goes to a clock-synced fakesink)")")
        print("\nVideo codecs (what `--codec` can ask for):")
        for codec in ["VP8", "VP9", "H264", "AV1", "H265"] {
            let parameters = MediaParameters(videoWidth: 640, videoHeight: 480, videoCodec: codec, videoCodecHwAcceleration: true)
            do throws(PipelineCompileError) {
                let graph = try PipelineCompiler(catalog: catalog).compileSend(parameters: parameters)
                let encoder = graph.nodes(withRole: .videoEncoder).first?.factory ?? "?"
                print("  \(codec.padding(toLength: 5, withPad: " ", startingAt: 0)) yes  encoder: \(encoder)")
            } catch {
                print("  \(codec.padding(toLength: 5, withPad: " ", startingAt: 0)) no   \(error)")
            }
        }
        print("\nAudio: OPUS \(catalog.contains("opusenc") ? "yes (opusenc)" : "no"); ISAC no (not in GStreamer)")
        print("\nEncoders in the registry:")
        let encoders = ElementFactory.all(klassContaining: ["Encoder", "Video"])
        for factory in encoders {
            let hardware = factory.klass.contains("Hardware") ? "hardware" : "software"
            print("  \(factory.name.padding(toLength: 18, withPad: " ", startingAt: 0)) rank \(String(factory.rank).padding(toLength: 4, withPad: " ", startingAt: 0)) \(hardware)  \(factory.longName)")
        }
        let hardware = encoders.filter { $0.klass.contains("Hardware") }
        print(hardware.isEmpty ? "  (no hardware video encoder: `--hw on` falls back to software)" : "")
        print("Features:")
        let features: [(String, [String])] = [
            ("WebRTC (webrtcbin, ICE, DTLS, SCTP)", ["webrtcbin", "nicesrc", "nicesink", "dtlssrtpenc", "sctpenc"]),
            ("Audio processing (AEC, NS, AGC)", ["webrtcdsp", "webrtcechoprobe"]),
            ("Recording (Matroska, WebM, MP4)", ["matroskamux", "webmmux", "mp4mux"]),
            ("Composite recording", ["compositor", "audiomixer"]),
            ("Snapshots (PNG)", ["pngenc"]),
            ("V4L2 cameras", ["v4l2src"]),
            ("Glass-to-glass marks", ["simplevideomark", "simplevideomarkdetect"]),
        ]
        for (name, elements) in features {
            let missing = elements.filter { !catalog.contains($0) }
            print("  \(missing.isEmpty ? "yes" : "no ") \(name)" + (missing.isEmpty ? "" : "  (missing: \(missing.joined(separator: ", ")))"))
        }
    }
}
