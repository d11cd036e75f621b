@testable import MediaPipeline
import Testing

/// `MediaParameters.applicationAudio`: the played audio joins the configured source in a mixer
/// in front of the audio processing, and nothing changes without it.
@Suite struct ApplicationAudioGraphTests {
    @Test func playedAudioIsMixedInFrontOfTheProcessing() throws {
        var parameters = MediaParameters()
        parameters.applicationAudio = true
        let graph = try Fixtures.compile(parameters)
        let source = try #require(graph.nodes(withRole: .applicationAudioSource).first)
        let mixer = try #require(graph.nodes(withRole: .applicationAudioMixer).first)
        let gate = try #require(graph.nodes(withRole: .applicationAudioGate).first)
        #expect(source.factory == "appsrc" && mixer.factory == "audiomixer" && gate.factory == "volume")
        #expect(mixer[property: "discont-wait"] == .uint(0))
        // source caps → gate → mixer ← … ← appsrc; mixer → caps → webrtcdsp.
        #expect(graph.links.contains { $0.from.node == "audio_caps" && $0.to.node == gate.id })
        #expect(graph.links.contains { $0.from.node == gate.id && $0.to.node == mixer.id })
        #expect(graph.links.contains { $0.from.node == "app_audio_caps" && $0.to.node == mixer.id })
        #expect(graph.links.contains { $0.from.node == "app_audio_mixed" && $0.to.node == "audio_dsp" })
        #expect(graph.decisions.contains { $0.hasPrefix("application audio: appsrc app_audio_src") })
    }

    @Test func withoutItTheGraphIsAsBefore() throws {
        let graph = try Fixtures.compile()
        #expect(graph.nodes(withRole: .applicationAudioSource).isEmpty && graph.nodes(withRole: .applicationAudioMixer).isEmpty)
        #expect(graph.links.contains { $0.from.node == "audio_caps" && $0.to.node == "audio_dsp" })
    }
}
