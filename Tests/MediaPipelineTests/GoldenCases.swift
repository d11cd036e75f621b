@testable import MediaPipeline
import Testing

/// One golden: a named send graph or receive fragment and the text it must render to.
struct GoldenCase: Sendable, CustomTestStringConvertible {
    var name: String
    /// The normal rendering, compared with `<name>.launch`.
    var launch: @Sendable () throws -> String
    /// The self-running variant, compared with `<name>.testrun.launch` and run by
    /// `pipelines/check-goldens.sh`; nil when it cannot run here (hardware encoders).
    var testRun: (@Sendable () throws -> String)?

    var testDescription: String { name }

    static func send(_ name: String, _ parameters: MediaParameters, hardware: Bool = false,
                     catalog softwareCatalog: StaticCatalog = Fixtures.software,
                     video: VideoInputs = .single(.testPattern())) -> GoldenCase {
        let catalog = hardware ? Fixtures.hardware : softwareCatalog
        let graph: @Sendable () throws -> PipelineGraph = { try Fixtures.compile(parameters, catalog: catalog, video: video) }
        let runnable: @Sendable () throws -> String = { try graph().launchDescription(testRun: true) }
        return GoldenCase(name: name, launch: { try graph().launchDescription }, testRun: hardware ? nil : runnable)
    }

    static func receive(_ name: String, kind: MediaKind, encoding: String, sink: ReceiveSinkSpec,
                        _ parameters: MediaParameters = MediaParameters()) -> GoldenCase {
        let fragment: @Sendable () throws -> PipelineFragment = {
            try PipelineCompiler(catalog: Fixtures.software).compileReceive(kind: kind, encodingName: encoding, sink: sink, parameters: parameters)
        }
        return GoldenCase(name: name, launch: { try fragment().launchDescription },
                          testRun: { try fragment().testRunLaunchDescription(feed: feed(kind: kind, encoding: encoding)) })
    }

    /// A synthetic RTP stream standing in for webrtcbin's src pad in test runs.
    static func feed(kind: MediaKind, encoding: String) -> String {
        switch encoding {
        case "VP8": "videotestsrc is-live=true num-buffers=60 ! video/x-raw,width=320,height=240,framerate=30/1 ! vp8enc deadline=1 ! rtpvp8pay pt=96"
        case "VP9": "videotestsrc is-live=true num-buffers=60 ! video/x-raw,width=320,height=240,framerate=30/1 ! vp9enc deadline=1 cpu-used=8 ! rtpvp9pay pt=96"
        case "H264": "videotestsrc is-live=true num-buffers=60 ! video/x-raw,width=320,height=240,framerate=30/1 ! x264enc tune=zerolatency speed-preset=ultrafast ! rtph264pay pt=96 config-interval=-1"
        default: "audiotestsrc is-live=true num-buffers=60 ! audio/x-raw,rate=48000,channels=1 ! opusenc ! rtpopuspay pt=111"
        }
    }

    static let all: [GoldenCase] = {
        var cases: [GoldenCase] = []
        for codec in ["VP8", "VP9", "H264"] {
            for hardware in [false, true] {
                for processing in [true, false] {
                    let name = "send-\(codec.lowercased())-\(hardware ? "hardware" : "software")" + (processing ? "" : "-noaudioprocessing")
                    cases.append(.send(name, MediaParameters(videoCodec: codec, noAudioProcessing: !processing), hardware: hardware))
                }
            }
        }
        cases.append(.send("send-audio-only", MediaParameters(videoCallEnabled: false)))
        cases.append(.send("send-audio-only-noaudioprocessing", MediaParameters(videoCallEnabled: false, noAudioProcessing: true)))
        cases.append(.send("send-vp8-software-noaec", MediaParameters(disableBuiltInAEC: true)))
        cases.append(.send("send-h264-openh264", MediaParameters(videoCodec: "H264"), catalog: Fixtures.software.removing(["x264enc"])))
        cases.append(.send("send-vp8-front-back", MediaParameters(),
                           video: .cameras(front: .testPattern(pattern: "smpte"), back: .preset(name: "ball"))))
        cases.append(.receive("receive-vp8-renderer", kind: .video, encoding: "VP8", sink: .renderer(name: "remote_video")))
        cases.append(.receive("receive-vp9-renderer", kind: .video, encoding: "VP9", sink: .renderer(name: "remote_video", format: .i420)))
        cases.append(.receive("receive-h264-renderer", kind: .video, encoding: "H264", sink: .renderer(name: "remote_video")))
        cases.append(.receive("receive-h264-passthrough", kind: .video, encoding: "H264", sink: .passthrough(name: "remote_video_tee")))
        cases.append(.receive("receive-opus-playback-aec", kind: .audio, encoding: "OPUS", sink: .playback))
        cases.append(.receive("receive-opus-playback-noaec", kind: .audio, encoding: "OPUS", sink: .playback, MediaParameters(disableBuiltInAEC: true)))
        cases.append(.receive("receive-opus-samples", kind: .audio, encoding: "OPUS", sink: .audioSamples(name: "remote_audio")))
        for codec in ["VP8", "H264"] {
            let parameters = MediaParameters(videoCodec: codec)
            cases.append(GoldenCase(name: "loopback-\(codec.lowercased())", launch: { try Loopback(parameters).launchDescription },
                                    testRun: { try Loopback(parameters).testRunLaunchDescription }))
        }
        return cases
    }()
}
