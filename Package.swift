// swift-tools-version:6.0
// ECVKit: the ECV Video Call SDK for headless Linux, in Swift on GStreamer.
// Layers, from the bottom up as in docs/architecture.md (a target imports only targets of its own
// line or the lines above it, its lower layers; only the binding imports C). Each target declares
// exactly the targets it imports.
//   CGLib, CGStreamer, CSoup, COpenSSL   C module maps (COpenSSL: libcrypto, for DTLS certificates)
//   CGLibShims, CGStreamerShims, CSoupShims   shims
//   GLibCore                        the GLib main loop and the utilities every layer shares
//   MediaPipeline                   pure Swift: ConnectParameters -> PipelineGraph, and the media values the SDK shows
//                                   (video frames, peer stats, recording summaries); on no other target
//   GStreamer, Soup                 the binding (GObjects, GStreamer, libsoup), on GLibCore (GStreamer also on MediaPipeline)
//   MediaRuntime                    PipelineGraph -> live GStreamer graph, runtime controls, the live recorder
//   ECVRecording                    recording review (inspection, report and verdict, timeline picture, contact sheet),
//                                   on MediaRuntime; a product for apps and `ecv`, linked by no SDK product
//   WebRTC                          a peer connection over webrtcbin
//   CallEngine                      one side of one call under every product: signaling adapter, peer, feeds, controls, recording
//   ECVProtocol                     the wire protocol's types (REST, signaling, data channel)
//   ECV                             the public SDK of the seeds
//   ECVPeer                         the SkyWay peer model on a PeerJS server (on ECV)
//   ECVService, ECVAgent            the reference backend and headless agent bots
//   EnQualify                       the identity-verification (EnQualify VideoCall) facade on ECV
//   ECVSpeech                       optional speech engines (pocketsphinx, espeak-ng) behind MediaPipeline's Transcriber
//                                   and SpeechSynthesizer; on no SDK product. Its C (CPocketSphinx) is confined to one
//                                   file, PocketSphinxDecoder.swift; espeak-ng runs as GStreamer's espeak element
//   ecv                             the CLI (its git commit from the BuildCommit build-tool plugin, Plugins/)
import PackageDescription

let gstreamerPackages: [String] = [
    "libgstreamer1.0-dev", "libgstreamer-plugins-base1.0-dev", "libgstreamer-plugins-bad1.0-dev",
    "libnice-dev", "gstreamer1.0-nice", "gstreamer1.0-plugins-good", "gstreamer1.0-plugins-bad",
    "gstreamer1.0-plugins-ugly", "gstreamer1.0-libav",
]

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "ECVKit",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "ECV", targets: ["ECV"]),
        .library(name: "ECVAgent", targets: ["ECVAgent"]),
        .library(name: "ECVPeer", targets: ["ECVPeer"]),
        .library(name: "ECVService", targets: ["ECVService"]),
        .library(name: "EnQualify", targets: ["EnQualify"]),
        .library(name: "ECVRecording", targets: ["ECVRecording"]),
        .library(name: "ECVSpeech", targets: ["ECVSpeech"]),
        .executable(name: "ecv", targets: ["ecv"]),
    ],
    targets: [
        // C layer
        .systemLibrary(name: "CGLib", pkgConfig: "glib-2.0", providers: [.apt(["libglib2.0-dev"])]),
        .systemLibrary(name: "CGStreamer", pkgConfig: "gstreamer-webrtc-1.0", providers: [.apt(gstreamerPackages)]),
        .systemLibrary(name: "CSoup", pkgConfig: "libsoup-3.0", providers: [.apt(["libsoup-3.0-dev", "glib-networking"])]),
        .systemLibrary(name: "CPocketSphinx", pkgConfig: "pocketsphinx", providers: [.apt(["libpocketsphinx-dev", "pocketsphinx-en-us"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .target(name: "CGLibShims", dependencies: ["CGLib"]),
        .target(name: "CGStreamerShims", dependencies: ["CGStreamer"]),
        .target(name: "CSoupShims", dependencies: ["CSoup"], linkerSettings: [.linkedLibrary("z")]),
        // The main loop and shared utilities
        .target(name: "GLibCore", dependencies: ["CGLib"], swiftSettings: strict),
        // The binding
        .target(name: "GStreamer", dependencies: ["GLibCore", "MediaPipeline", "CGStreamer", "CGLibShims", "CGStreamerShims", "COpenSSL"], swiftSettings: strict),
        .target(name: "Soup", dependencies: ["GLibCore", "CSoup", "CGLibShims", "CSoupShims"], swiftSettings: strict),
        // Media
        .target(name: "MediaPipeline", swiftSettings: strict),
        .target(name: "MediaRuntime", dependencies: ["GLibCore", "GStreamer", "MediaPipeline"], swiftSettings: strict),
        // Recording review: its own product, outside the SDK products' link.
        .target(name: "ECVRecording", dependencies: ["GLibCore", "GStreamer", "MediaPipeline", "MediaRuntime"], swiftSettings: strict),
        .target(name: "WebRTC", dependencies: ["GLibCore", "GStreamer", "MediaPipeline", "MediaRuntime"], swiftSettings: strict),
        .target(name: "CallEngine", dependencies: ["GLibCore", "GStreamer", "MediaPipeline", "MediaRuntime", "WebRTC"], swiftSettings: strict),
        // The ECV system
        .target(name: "ECVProtocol", swiftSettings: strict),
        .target(name: "ECV", dependencies: ["GLibCore", "CallEngine", "ECVProtocol", "Soup", "WebRTC", "MediaRuntime", "MediaPipeline", "GStreamer"],
                swiftSettings: strict),
        .target(name: "ECVPeer", dependencies: ["GLibCore", "CallEngine", "ECV", "ECVProtocol", "Soup", "WebRTC", "MediaRuntime", "MediaPipeline"],
                swiftSettings: strict),
        .target(name: "ECVService", dependencies: ["GLibCore", "ECVProtocol", "Soup"], swiftSettings: strict),
        .target(name: "ECVAgent", dependencies: ["GLibCore", "CallEngine", "ECV", "ECVProtocol", "WebRTC", "MediaRuntime", "MediaPipeline", "Soup", "GStreamer"],
                swiftSettings: strict),
        .target(name: "ECVSpeech", dependencies: ["GLibCore", "GStreamer", "MediaPipeline", "CPocketSphinx"], swiftSettings: strict),
        .target(name: "EnQualify", dependencies: ["GLibCore", "ECV", "ECVProtocol"], swiftSettings: strict),
        .executableTarget(name: "ecv", dependencies: ["GLibCore", "ECV", "ECVService", "ECVAgent", "EnQualify", "ECVPeer", "ECVRecording", "ECVSpeech", "MediaPipeline",
                                              "MediaRuntime", "GStreamer", "ECVProtocol", "Soup"],
                          swiftSettings: strict, plugins: ["BuildCommit"]),
        // `ecv --version`'s git commit, captured before every build ("unknown" outside a git checkout).
        .plugin(name: "BuildCommit", capability: .buildTool(), exclude: ["commit.sh"]),
        // Benchmarks (programs, not tests: `make bench`)
        .target(name: "BenchmarkSupport", dependencies: ["GLibCore", "GStreamer"], path: "Benchmarks/Support", swiftSettings: strict),
        .executableTarget(name: "bench-encode", dependencies: ["GLibCore", "BenchmarkSupport", "GStreamer", "MediaPipeline", "MediaRuntime"],
                          path: "Benchmarks/EncodeLatency", swiftSettings: strict),
        .executableTarget(name: "bench-call", dependencies: ["GLibCore", "BenchmarkSupport", "GStreamer", "MediaPipeline", "MediaRuntime", "WebRTC",
                                                             "ECV", "ECVService", "ECVAgent", "ECVProtocol", "ECVRecording", "Soup", "NetworkTestSupport",
                                                             "MediaTestSupport"],
                          path: "Benchmarks/CallBenchmarks", swiftSettings: strict),
        .executableTarget(name: "bench-voice", dependencies: ["GLibCore", "GStreamer", "MediaPipeline", "MediaRuntime", "WebRTC", "ECVSpeech"],
                          path: "Benchmarks/VoiceTurn", swiftSettings: strict),
        .executableTarget(name: "bench-acd", dependencies: ["BenchmarkSupport", "ECVService", "ECVProtocol"], path: "Benchmarks/ACDRouting",
                          swiftSettings: strict),
        // Test helpers: a child process the recording tests SIGKILL mid-recording.
        .executableTarget(name: "ecv-recording-probe", dependencies: ["WebRTC", "MediaRuntime", "MediaPipeline", "GStreamer"],
                          path: "Tests/Support/RecordingProbe", swiftSettings: strict),
        // A call end that runs inside a network namespace for the network tests and benchmark.
        .executableTarget(name: "ecv-network-peer", dependencies: ["GLibCore", "WebRTC", "MediaRuntime", "MediaPipeline", "GStreamer"],
                          path: "Tests/Support/NetworkPeer", swiftSettings: strict),
        // Test support shared by the test targets
        .target(name: "MediaTestSupport", dependencies: ["GLibCore", "GStreamer", "MediaPipeline"], path: "Tests/Support/MediaTestSupport", swiftSettings: strict),
        .target(name: "NetworkTestSupport", dependencies: ["GLibCore", "WebRTC", "MediaPipeline", "GStreamer", "MediaTestSupport", "ECV", "ECVService",
                                                         "ECVProtocol"],
                path: "Tests/Support/NetworkTestSupport", swiftSettings: strict),
        .target(name: "ECVTestSupport", dependencies: ["GLibCore", "MediaTestSupport", "ECV", "ECVPeer", "ECVService", "ECVAgent", "ECVProtocol", "GStreamer"],
                path: "Tests/Support/ECVTestSupport", swiftSettings: strict),
        // Tests
        .testTarget(name: "GStreamerTests", dependencies: ["GLibCore", "GStreamer"], swiftSettings: strict),
        .testTarget(name: "SoupTests", dependencies: ["GLibCore", "Soup", "GStreamer", "MediaTestSupport"], swiftSettings: strict),
        .testTarget(name: "MediaPipelineTests", dependencies: ["MediaPipeline"], swiftSettings: strict),
        // The recording tests read their files back with ECVRecording; its own tests (RecordingInspectionTests,
        // RecordingInspectionCrashTests) sit beside them for the recordings those targets make.
        .testTarget(name: "MediaRuntimeTests", dependencies: ["GLibCore", "MediaRuntime", "MediaPipeline", "GStreamer", "MediaTestSupport", "ECVRecording"],
                    swiftSettings: strict),
        .testTarget(name: "WebRTCTests", dependencies: ["GLibCore", "WebRTC", "MediaRuntime", "MediaPipeline", "GStreamer", "MediaTestSupport", "ECVRecording"],
                    swiftSettings: strict),
        .testTarget(name: "NetworkTests", dependencies: ["GLibCore", "WebRTC", "MediaPipeline", "GStreamer", "NetworkTestSupport"],
                    swiftSettings: strict),
        .testTarget(name: "ECVProtocolTests", dependencies: ["ECVProtocol"], swiftSettings: strict),
        .testTarget(name: "ECVTests", dependencies: ["GLibCore", "ECVTestSupport", "ECV", "ECVService", "ECVAgent", "ECVProtocol", "Soup", "GStreamer", "MediaTestSupport"],
                    swiftSettings: strict),
        .testTarget(name: "ECVAgentTests", dependencies: ["GLibCore", "ECVTestSupport", "ECVAgent", "ECV", "ECVService", "ECVProtocol", "WebRTC", "MediaPipeline",
                                                         "MediaRuntime", "GStreamer", "MediaTestSupport", "NetworkTestSupport", "ECVRecording"], swiftSettings: strict),
        .testTarget(name: "CLITests", dependencies: ["GLibCore", "ECVService", "ECVAgent", "ECV", "ECVProtocol", "Soup", "GStreamer", "MediaRuntime", "MediaTestSupport",
                                                   "NetworkTestSupport", "ECVRecording"], swiftSettings: strict),
        // The seed guides' and the README's own Swift examples, built as an app builds them:
        // importing only the ECV, ECVAgent, ECVRecording and ECVSpeech products.
        .testTarget(name: "SeedExampleTests", dependencies: ["ECV", "ECVAgent", "ECVRecording", "ECVSpeech"], swiftSettings: strict),
        .testTarget(name: "ECVPeerTests", dependencies: ["GLibCore", "ECVTestSupport", "ECVPeer", "ECVService", "ECVProtocol", "NetworkTestSupport"],
                    swiftSettings: strict),
        .testTarget(name: "ECVServiceTests", dependencies: ["GLibCore", "ECVService", "ECVProtocol", "Soup", "GStreamer", "MediaTestSupport"], swiftSettings: strict),
        .testTarget(name: "EnQualifyTests", dependencies: ["GLibCore", "ECVTestSupport", "EnQualify", "ECV", "ECVService", "ECVAgent",
                                                          "ECVProtocol"], swiftSettings: strict),
        .testTarget(name: "ECVSpeechTests", dependencies: ["GLibCore", "ECVSpeech", "MediaPipeline", "WebRTC", "GStreamer",
                                                          "MediaTestSupport", "MediaRuntime"], swiftSettings: strict),
        // Interop with foreign stacks (headless Chromium, aiortc; Tests/Interop), set up by `make test`.
        .testTarget(name: "InteropTests", dependencies: ["GLibCore", "ECVTestSupport", "ECV", "ECVAgent", "ECVPeer", "ECVService", "ECVProtocol", "MediaPipeline", "NetworkTestSupport",
                                                        "MediaRuntime", "GStreamer", "MediaTestSupport", "ECVRecording", "ECVSpeech"], swiftSettings: strict),
    ]
)
