import ECVProtocol
import ECVSpeech
import Foundation
import GStreamer
import MediaPipeline
import MediaRuntime
import Soup

/// `ecv doctor`: what this machine's GStreamer offers for calls: per codec the encoder a call
/// would use and why, hardware encoders found, and the features whose plugins are missing.
enum DoctorCommand {
    static let usage = """
        ecv doctor [--json]      codecs (the encoder a call would use, and why), hardware encoders and features available here
          --service-url URL        also ask this ECV service for its queues (GET /api/Queues): waiting calls and agents
          --pin PIN                pin the service's TLS certificate (repeatable), as ecv call takes it
          --json                   the same as one JSON object
          Exits 1 when GStreamer cannot start or the service does not answer.
        """

    static let spec = OptionSpec(values: ["service-url", "pin"], flags: ["json"])

    static let features: [(name: String, elements: [String])] = [
        ("WebRTC (webrtcbin, ICE, DTLS, SCTP)", ["webrtcbin", "nicesrc", "nicesink", "dtlssrtpenc", "sctpenc"]),
        ("Audio processing (AEC, NS, AGC)", ["webrtcdsp", "webrtcechoprobe"]),
        ("Recording (Matroska, WebM, MP4)", ["matroskamux", "webmmux", "mp4mux"]),
        ("Composite recording", ["compositor", "audiomixer"]),
        ("Snapshots (PNG)", ["pngenc"]),
        ("V4L2 cameras", ["v4l2src"]),
        ("Glass-to-glass marks", ["simplevideomark", "simplevideomarkdetect"]),
        ("Text to speech (espeak-ng: gstreamer1.0-espeak)", ["espeak"]),
    ]

    static func run(_ words: [String]) async throws(CLIError) {
        var arguments = try Arguments(words, spec)
        let json = arguments.flag("json"), service = arguments.value("service-url"), pinTexts = arguments.values("pin")
        try arguments.finish()
        if service == nil && !pinTexts.isEmpty { throw .usage("--pin needs --service-url") }
        var queues: QueuesResponse?
        if let service {
            let pins: [CertificatePin]
            do { pins = try CertificatePin.parse(pinTexts) } catch { throw .usage("--pin: \(error)") }
            queues = try await fetchQueues(service, pins: pins)
        }
        do { try GStreamerRuntime.ensureInitialized() } catch { throw .failed("GStreamer: \(error)") }
        let catalog = LiveCatalog.shared
        var codecs: [[String: any Sendable]] = []
        for codec in ["VP8", "VP9", "H264", "AV1", "H265"] {
            let parameters = MediaParameters(videoWidth: 640, videoHeight: 480, videoCodec: codec, videoCodecHwAcceleration: true)
            do throws(PipelineCompileError) {
                let graph = try PipelineCompiler(catalog: catalog).compileSend(parameters: parameters)
                let encoder = graph.nodes(withRole: .videoEncoder).first?.factory ?? "?"
                let why = graph.decisions.first { $0.hasPrefix("video encoder:") } ?? ""
                codecs.append(["codec": codec, "available": true, "encoder": encoder, "why": why])
            } catch {
                codecs.append(["codec": codec, "available": false, "why": error.description])
            }
        }
        let encoders = ElementFactory.all(klassContaining: ["Encoder", "Video"])
        let hardware = encoders.filter { $0.klass.contains("Hardware") }.map(\.name)
        var featureRows: [[String: any Sendable]] = features.map { feature in
            let missing = feature.elements.filter { !catalog.contains($0) }
            return ["feature": feature.name, "available": missing.isEmpty, "missing": missing]
        }
        // Not an element: the recogniser's model files (the library itself is linked into ecv).
        let model = PocketSphinxTranscriber.Model.debianEnglish
        featureRows.append(["feature": "Speech recognition (pocketsphinx: pocketsphinx-en-us)", "available": model.isInstalled,
                            "missing": model.isInstalled ? [String]() : [model.acousticModel]])
        let audioOutput = HeadlessAudio.outputAvailable
        let opus = catalog.contains("opusenc")
        if json {
            NDJSON.emit(["gstreamer": GStreamerRuntime.versionString, "audioOutput": audioOutput, "videoCodecs": codecs,
                         "audioCodecs": [["codec": "OPUS", "available": opus, "encoder": opus ? "opusenc" : ""] as [String: any Sendable]],
                         "hardwareVideoEncoders": hardware, "softwareVideoEncoders": encoders.count - hardware.count, "features": featureRows,
                         "service": queues.map { queues in
                             ["url": service ?? "", "defaultQueue": queues.defaultQueue, "queues": queues.queues.map { queue in
                                 ["name": queue.name, "waiting": queue.waiting, "readyAgents": queue.readyAgents,
                                  "staffedAgents": queue.staffedAgents] as [String: any Sendable]
                             }] as [String: any Sendable]
                         } ?? NSNull()])
            return
        }
        say("GStreamer: \(GStreamerRuntime.versionString)")
        say("Audio output device: \(audioOutput ? "yes" : "none (far-end audio goes to a clock-synced fakesink)")")
        say("\nVideo codecs (what `--codec` can ask for), with the encoder a call would use:")
        for row in codecs {
            let name = "\(row["codec"] ?? "")".padding(toLength: 5, withPad: " ", startingAt: 0)
            if row["available"] as? Bool == true {
                say("  \(name) yes  \(row["encoder"] ?? "")  (\(row["why"] ?? ""))")
            } else {
                say("  \(name) no   \(row["why"] ?? "")")
            }
        }
        say("\nAudio: OPUS \(opus ? "yes (opusenc)" : "no"); ISAC no (not in GStreamer)")
        say("\nHardware video encoders: " + (hardware.isEmpty
            ? "none (`--hw on` falls back to software)" : hardware.joined(separator: ", "))
            + "; \(encoders.count - hardware.count) software video encoders in the registry (gst-inspect-1.0 lists them)")
        say("\nFeatures:")
        for row in featureRows {
            let missing = row["missing"] as? [String] ?? []
            say("  \(missing.isEmpty ? "yes" : "no ") \(row["feature"] ?? "")" + (missing.isEmpty ? "" : "  (missing: \(missing.joined(separator: ", ")))"))
        }
        if let queues, let service {
            say("\nService \(service): queues (default \(queues.defaultQueue))")
            for queue in queues.queues {
                say("  \(queue.name): \(queue.waiting) waiting, \(queue.readyAgents) of \(queue.staffedAgents) staffed agents ready")
            }
        }
    }

    /// `GET <service>/api/Queues`, the backend v1.75 summary; a v1.5 service has none (404).
    static func fetchQueues(_ service: String, pins: [CertificatePin]) async throws(CLIError) -> QueuesResponse {
        var base = service
        while base.hasSuffix("/") { base.removeLast() }
        let response: HTTPResponse
        do { response = try await HTTPClient(pins: pins).get(base + ECVAPI.queues) } catch {
            throw .failed("the service at \(base) does not answer: \(error)")
        }
        guard response.status == 200 else {
            throw .failed("\(base)\(ECVAPI.queues) answered \(response.status)" + (response.status == 404 ? " (a backend 1.5 has no queue summary)" : ""))
        }
        do { return try ECVJSON.decode(QueuesResponse.self, from: response.data) } catch {
            throw .failed("\(base)\(ECVAPI.queues) answered something that is not a queue summary: \(error)")
        }
    }
}
