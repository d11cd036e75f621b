import Testing
import GStreamer
import MediaPipeline
@testable import WebRTC

@Suite struct PeerConnectionSmokeTests {
    @Test func vp8CallConnectsAndFramesArrive() async throws {
        let media = MediaConfiguration(parameters: ConnectParameters(videoWidth: 320, videoHeight: 240),
                                       receiveVideo: .renderer(name: "remote_video"), receiveAudio: .discard)
        let pair = PeerPair(offerer: media, answerer: media)
        let offererEvents = pair.offerer.events()
        let answererFrames = FrameCollector()
        let watcher = Task {
            for await event in pair.answerer.events() {
                if case .remoteStream(let stream) = event, let sink = stream.appSink { answererFrames.attach(sink) }
                print("answerer:", event)
            }
        }
        let offererLog = Task { for await event in offererEvents { print("offerer:", event) } }
        try await pair.start()
        try await waitFor(.connected, on: pair.offerer)
        try await Task.sleep(for: .seconds(2))
        print("frames at answerer:", answererFrames.count)
        let stats = try await pair.offerer.stats()
        for field in stats.raw.fields { print("STAT", field.name, field.value.description.prefix(400)) }
        print("offerer stats out:", stats.outbound.map { ($0.kind as Any, $0.bytesSent) }, "in:", stats.inbound.map { ($0.kind as Any, $0.bytesReceived) })
        #expect(answererFrames.count > 30)
        await pair.close()
        watcher.cancel(); offererLog.cancel()
    }
}
