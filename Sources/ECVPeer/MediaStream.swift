import CallEngine
import ECV
import MediaPipeline
import Synchronization

/// One party's media (SkyWay's `SKWMediaStream`): the local stream from
/// `Navigator.getUserMedia(constraints:)`, which every call it is given sends, or a remote
/// stream a `MediaConnection` delivers with its STREAM event.
///
/// Renderers receive RGBA frames (local: as sent, after mute, once a call runs; remote: decoded).
/// Switching a local track on or off or the camera applies to every call sending the stream,
/// inside the media graph (no renegotiation); switching a remote track changes only what this
/// process renders or plays.
public final class MediaStream: Sendable {
    public enum Party: String, Sendable { case local, remote }

    public let party: Party
    /// What the local stream captures; nil for a remote stream.
    public let constraints: MediaConstraints?
    let feed = RendererFeed()
    private let fanOut = RendererFanOut()

    private struct State {
        var audioEnabled = true
        var videoEnabled: Bool
        var camera: MediaConstraints.CameraPosition
        /// Local: the calls sending this stream (weak: a stream does not keep a call alive).
        var senders: [WeakMediaConnection] = []
        var previewFrom: ObjectIdentifier?
        var remoteKinds: Set<MediaKind> = []
        var closed = false
    }
    private let state: Mutex<State>

    init(local constraints: MediaConstraints) {
        party = .local
        self.constraints = constraints
        state = Mutex(State(audioEnabled: constraints.audioFlag, videoEnabled: constraints.videoFlag, camera: constraints.cameraPosition))
        feed.current = fanOut
    }

    init(remote: Void) {
        party = .remote
        constraints = nil
        state = Mutex(State(videoEnabled: true, camera: .front))
        feed.current = fanOut
    }

    // MARK: Renderers

    /// Shows track `track` (0: the only video track) in `renderer`.
    public func addVideoRenderer(_ renderer: any VideoRenderer, track: Int = 0) {
        guard track == 0 else { return }
        fanOut.add(renderer)
    }

    public func removeVideoRenderer(_ renderer: any VideoRenderer, track: Int = 0) {
        guard track == 0 else { return }
        fanOut.remove(renderer)
    }

    /// Pictures seen so far (remote: decoded; local: previewed while a call sends the stream).
    public var videoFrameCount: Int { feed.measurement.frames }
    public var videoSize: (width: Int, height: Int)? { feed.measurement.size }
    public var framesPerSecond: Double? { feed.measurement.framesPerSecond }

    public var videoTrackCount: Int {
        switch party {
        case .local: constraints?.videoFlag == true ? 1 : 0
        case .remote: state.withLock { $0.remoteKinds.contains(.video) ? 1 : 0 }
        }
    }

    public var audioTrackCount: Int {
        switch party {
        case .local: constraints?.audioFlag == true ? 1 : 0
        case .remote: state.withLock { $0.remoteKinds.contains(.audio) ? 1 : 0 }
        }
    }

    // MARK: Tracks

    public var isAudioEnabled: Bool { state.withLock { $0.audioEnabled } }
    public var isVideoEnabled: Bool { state.withLock { $0.videoEnabled } }

    /// Local: mutes or unmutes the microphone in every call. Remote: silences its sound here.
    public func setEnableAudioTrack(_ track: Int = 0, enable: Bool) async {
        state.withLock { $0.audioEnabled = enable }
        await applyToSenders()
    }

    /// Local: sends black or the camera in every call. Remote: stops or resumes rendering.
    public func setEnableVideoTrack(_ track: Int = 0, enable: Bool) async {
        state.withLock { $0.videoEnabled = enable }
        if party == .remote { feed.isEnabled = enable }
        await applyToSenders()
    }

    public func getCameraPosition() -> MediaConstraints.CameraPosition { state.withLock { $0.camera } }

    /// Switches every call sending this stream to `position` (needs a back camera in the constraints).
    public func setCameraPosition(_ position: MediaConstraints.CameraPosition) async throws(PeerError) {
        guard party == .local, constraints?.cameras.back != nil else {
            throw PeerError(.invalidArgument, "the stream has one camera only; give MediaConstraints.cameras a back camera")
        }
        state.withLock { $0.camera = position }
        await applyToSenders()
    }

    /// Toggles front and back (the tutorial's switch-camera button).
    @discardableResult
    public func switchCamera() async throws(PeerError) -> MediaConstraints.CameraPosition {
        let next: MediaConstraints.CameraPosition = getCameraPosition() == .front ? .back : .front
        try await setCameraPosition(next)
        return next
    }

    /// Stops rendering: renderers are removed (a local stream's calls keep sending; close them).
    public func close() {
        state.withLock { $0.closed = true }
        fanOut.removeAll()
    }

    // MARK: For the calls

    /// What a call applies to its send graph: mute states and the camera.
    var sendState: (audio: Bool, video: Bool, camera: MediaConstraints.CameraPosition) {
        state.withLock { ($0.audioEnabled, $0.videoEnabled, $0.camera) }
    }

    /// A call started sending this stream; the first one also feeds its preview here.
    func added(sender connection: MediaConnection) -> Bool {
        state.withLock { state in
            state.senders.removeAll { $0.connection == nil }
            state.senders.append(WeakMediaConnection(connection: connection))
            guard state.previewFrom == nil else { return false }
            state.previewFrom = ObjectIdentifier(connection)
            return true
        }
    }

    func removed(sender connection: MediaConnection) {
        state.withLock { state in
            state.senders.removeAll { $0.connection == nil || $0.connection === connection }
            if state.previewFrom == ObjectIdentifier(connection) { state.previewFrom = nil }
        }
    }

    func noteRemote(_ kind: MediaKind) { state.withLock { _ = $0.remoteKinds.insert(kind) } }

    private func applyToSenders() async {
        let senders = state.withLock { $0.senders.compactMap(\.connection) }
        for sender in senders { await sender.applySendState() }
    }
}

struct WeakMediaConnection: Sendable {
    weak var connection: MediaConnection?
}

/// Hands each frame to every renderer a stream has.
final class RendererFanOut: VideoRenderer {
    private let renderers = Mutex<[any VideoRenderer]>([])

    func add(_ renderer: any VideoRenderer) {
        renderers.withLock { list in if !list.contains(where: { $0 === renderer }) { list.append(renderer) } }
    }

    func remove(_ renderer: any VideoRenderer) { renderers.withLock { $0.removeAll { $0 === renderer } } }
    func removeAll() { renderers.withLock { $0.removeAll() } }

    func setSize(width: Int, height: Int) {
        for renderer in renderers.withLock({ $0 }) { renderer.setSize(width: width, height: height) }
    }

    func renderFrame(_ frame: VideoFrame?) {
        for renderer in renderers.withLock({ $0 }) { renderer.renderFrame(frame) }
    }
}
