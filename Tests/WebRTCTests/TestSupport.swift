import Foundation
import Testing
import GStreamer
import MediaPipeline
@testable import WebRTC

enum TestRuntime {
    static let ready: Void = {
        LeakTracer.enableBeforeInitialization()
        try! GStreamerRuntime.ensureInitialized()
    }()
}

/// Two peers wired through loopback signaling, the first one offering.
struct PeerPair {
    let offerer: PeerConnection
    let answerer: PeerConnection
    let signaling: LoopbackSignaling

    init(offerer offererMedia: MediaConfiguration, answerer answererMedia: MediaConfiguration,
         configure: (inout PeerConfiguration) -> Void = { _ in }) {
        _ = TestRuntime.ready
        let signaling = LoopbackSignaling()
        var first = PeerConfiguration(media: offererMedia)
        var second = PeerConfiguration(media: answererMedia)
        configure(&first)
        configure(&second)
        offerer = PeerConnection(configuration: first, role: .offerer, sendSignaling: signaling.first.send)
        answerer = PeerConnection(configuration: second, role: .answerer, sendSignaling: signaling.second.send)
        signaling.connectFirst(to: offerer)
        signaling.connectSecond(to: answerer)
        self.signaling = signaling
    }

    func start(dataChannels: [DataChannelConfig] = []) async throws {
        try await answerer.start(dataChannels: dataChannels)
        try await offerer.start(dataChannels: dataChannels)
    }

    func close() async {
        await offerer.close()
        await answerer.close()
        signaling.close()
    }
}

/// Waits until `peer` reports `state`, or fails after `timeout`.
func waitFor(_ state: PeerState, on peer: PeerConnection, timeout: Duration = .seconds(15)) async throws {
    let events = peer.events()
    if await peer.peerState == state { return }
    try await withTimeout(timeout, "\(state)") {
        for await event in events {
            if case .stateChanged(let new) = event, new == state { return }
        }
        throw TestFailure("event stream ended before \(state)")
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func withTimeout<T: Sendable>(_ timeout: Duration, _ what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw TestFailure("timed out after \(timeout) waiting for \(what)")
        }
        let result = try await group.next()!
        group.cancelAll()
        return result
    }
}

/// Counts frames and remembers the last one, from an appsink.
final class FrameCollector: Sendable {
    private let state = Locked<(count: Int, last: VideoFrame?)>((0, nil))
    var count: Int { state.value.count }
    var last: VideoFrame? { state.value.last }

    func attach(_ sink: AppSink) {
        sink.setSampleHandler { [state] sample in
            let frame = sample.videoFrame()
            state.withLock { $0.count += 1; $0.last = frame }
        }
    }
}
