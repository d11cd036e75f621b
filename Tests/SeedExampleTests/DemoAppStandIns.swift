import ECV
import Synchronization

// What the seed's snippets take from the demo app around them (its `AppState`, SwiftUI's `@State`
// and navigation, its renderer class), reduced to what lets the snippets compile as the guides
// print them and run where they can. Nothing here is SDK code.

/// The demo's `AppState`: where the app keeps its one SDK instance.
final class AppState: Sendable {
    let sdk: ECVSdk?

    init(sdk: ECVSdk?) { self.sdk = sdk }
}

/// The demo's navigation routes (`NavigationRoute`), as far as the snippets use them.
enum NavigationRoute: Equatable, Sendable {
    case mainScreen
    case callScreen(rtcId: String)
}

/// Stands in for SwiftUI's `NavigationPath` behind the demo's `@Binding`: records where the app
/// was sent, so a test can tell.
final class NavigationPath: Sendable {
    private let appended = Mutex<[NavigationRoute]>([])

    func append(_ route: NavigationRoute) { appended.withLock { $0.append(route) } }

    var routes: [NavigationRoute] { appended.withLock { $0 } }
}

/// SwiftUI's `@State` without SwiftUI: the value lives in storage every copy of the view shares,
/// and the setter is `nonmutating`, so the screens' methods and event handlers assign
/// `self.videoCall = …` and `isOnHold = true` exactly as the guides write them. Behind a mutex,
/// because SDK event handlers are `@Sendable` and run off the main thread.
@propertyWrapper
struct State<Value: Sendable>: Sendable {
    private final class Storage: Sendable {
        let value: Mutex<Value>
        init(_ value: Value) { self.value = Mutex(value) }
    }

    private let storage: Storage

    init(wrappedValue: Value) { storage = Storage(wrappedValue) }

    var wrappedValue: Value {
        get { storage.value.withLock { $0 } }
        nonmutating set { storage.value.withLock { $0 = newValue } }
    }
}

/// The demo's `Renderer` (an `RTCVideoRenderer` drawing into an `RTCMTLVideoView`) as a headless
/// `VideoRenderer`: it counts the frames it is given instead of drawing them.
final class Renderer: VideoRenderer {
    private let counted = Mutex(0)

    init() { Logger.debug("Renderer created") }

    deinit { Logger.debug("Renderer deallocated") }

    var framesRendered: Int { counted.withLock { $0 } }

    func renderFrame(_ frame: VideoFrame?) {
        if frame != nil { counted.withLock { $0 += 1 } }
    }
}

/// Collects what the SDK's `Logger` writes while a test runs a snippet that logs. `Logger` is
/// process-wide, so only one serialized suite uses it.
final class LogRecorder: Sendable {
    private let lines = Mutex<[String]>([])
    private let levelBefore = Logger.level

    /// Routes `Logger` here at `level` until `stop()`.
    init(level: Logger.Level) {
        Logger.setLevel(logLevel: level)
        Logger.setHandler { [self] _, message in lines.withLock { $0.append(message) } }
    }

    var messages: [String] { lines.withLock { $0 } }

    func stop() {
        Logger.resetHandler()
        Logger.setLevel(logLevel: levelBefore)
    }
}

/// An SDK for snippets that only build objects: its URL is never contacted.
func offlineSDK(serviceUrl: String = "https://ecv.example.com") throws -> ECVSdk {
    try ECVSdk(config: ECVSdkConfiguration(name: "Seed examples", serviceUrl: serviceUrl))
}
