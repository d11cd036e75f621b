import ECV
import ECVAgent
import ECVTestSupport
import GLibCore
import Testing

// The guide's demo app as an integrator ports it: its CallScreen `setup()` verbatim (handlers
// cleared and home on `CallEnded`), plus the Turkish guide §7.1's transfer handling (the queue
// page again, with the new rtcId, on `TransferCompleted`) and its queue page for a transferred
// call (`createVideoCall(rtcId:)`, `isDialed = true`, `createQueueSocket()`). Navigation is a
// stand-in for SwiftUI's: appending a route shows the screen, which runs its `setup()`.

/// The demo's routes.
enum DemoRoute: Equatable, Sendable {
    case mainScreen
    case queueScreen(rtcId: String?, isTransferred: Bool)
    case callScreen(rtcId: String)
}

/// SwiftUI's `@State` without SwiftUI (as in SeedExampleTests): storage every copy of the view
/// shares, a `nonmutating` setter, behind a lock because SDK handlers run off the main thread.
@propertyWrapper
struct State<Value: Sendable>: Sendable {
    private let storage: Locked<Value>
    init(wrappedValue: Value) { storage = Locked(wrappedValue) }
    var wrappedValue: Value {
        get { storage.value }
        nonmutating set { storage.withLock { $0 = newValue } }
    }
}

/// The demo's `AppState` and navigation: each appended route's screen is shown (its `setup()` runs).
final class DemoApp: Sendable {
    let sdk: ECVSdk?
    private let routes = Locked<[DemoRoute]>([])
    private let screens = Locked<[any Sendable]>([])

    init(sdk: ECVSdk) { self.sdk = sdk }

    var visited: [DemoRoute] { routes.value }

    /// The call screens shown so far, in order.
    var callScreens: [CallScreen] { screens.value.compactMap { $0 as? CallScreen } }

    func append(_ route: DemoRoute) {
        routes.withLock { $0.append(route) }
        switch route {
        case .mainScreen:
            // Home: the navigation stack's screens are gone (they hold the app, the app held them).
            screens.withLock { $0.removeAll() }
        case .queueScreen(let rtcId, let isTransferred):
            let screen = QueueScreen(rtcId: rtcId, isTransferred: isTransferred, appState: self, path: self)
            screens.withLock { $0.append(screen) }
            screen.setup()
        case .callScreen(let rtcId):
            let screen = CallScreen(rtcId: rtcId, appState: self, path: self)
            screens.withLock { $0.append(screen) }
            screen.setup()
        }
    }
}

/// The demo's `Renderer`, counting frames instead of drawing them.
final class Renderer: VideoRenderer {
    private let counted = Locked(0)
    var framesRendered: Int { counted.value }
    func renderFrame(_ frame: VideoFrame?) { if frame != nil { counted.withLock { $0 += 1 } } }
}

/// The queue page of §7.1: a transferred call is a new call object, never dialed again.
struct QueueScreen: Sendable {
    let rtcId: String?
    let isTransferred: Bool?
    let appState: DemoApp
    let path: DemoApp

    func setup() {
        Task {
            // Çağrı aktarım özelliği İLE (with the call transfer feature)
            let call = isTransferred == true ? await appState.sdk?.createVideoCall(rtcId: rtcId!) : appState.sdk?.getVideoCall(rtcId: rtcId!)

            let ECVModules = appState.sdk?.modules
            ECVModules?.onCallEvent.append { (videoCall: VideoCall, newEvent: VideoCallEvent, lastEvent: VideoCallEvent) in
                if(videoCall.rtcId != call?.rtcId){
                    return
                }
                if(newEvent.type == .AgentConnected) {
                    path.append(DemoRoute.callScreen(rtcId: videoCall.rtcId))
                }
            }

            if(isTransferred == true) { // Çağrı Aktarımı, arama yapılmasına gerek yok, sadece kuyrukSocket beklenir
              call?.isDialed = true
              _ = await call?.createQueueSocket()
              return
            }
            await call?.start(dialCallParameters: DialCallParameters(callerName: "Jane"))
        }
    }
}

/// The guide's CallScreen `setup()` ("Connect the VideoCall", way 1) verbatim, with §7.1's
/// `TransferCompleted` branch added to its handler.
struct CallScreen: Sendable {
    let rtcId: String?
    let appState: DemoApp
    let path: DemoApp

    @State var videoCall: VideoCall? = nil
    @State var webRtcConnection: WebRtcConnection? = nil
    @State var localRenderer: Renderer? = nil
    @State var remoteRenderer: Renderer? = nil
    @State var callError: String? = nil

    func setup() {
      Task {
          guard let rtcId = self.rtcId else {
              self.callError = "RtcId not initialized"
              Logger.error("Setup failed: RtcId is nil")
              return
          }

          if let videoCall = appState.sdk?.getVideoCall(rtcId: rtcId){
              self.videoCall = videoCall
          }
          else {
              self.videoCall = await appState.sdk?.createVideoCall(rtcId: rtcId)
          }

          // Handle call events
          let ECVModules = appState.sdk?.modules
          ECVModules?.onCallEvent.append { (videoCall: VideoCall, newEvent: VideoCallEvent, lastEvent: VideoCallEvent) in
              if(self.videoCall?.rtcId != videoCall.rtcId){
                  return // Making sure we only catch the events related to the current call. // comment this line to catch all calls' events
              }

              if(newEvent.type == .CallEnded){
                  ECVModules?.onCallEvent = [] // reset events to prevent overflow of events
                  path.append(DemoRoute.mainScreen)
              }
              // §7.1: back to the queue page, with the new rtcId.
              else if(newEvent.type == .TransferCompleted){
                  path.append(DemoRoute.queueScreen(rtcId: newEvent.data["rtcId"], isTransferred: true))
              }
          }

          guard let webRtcConnection = self.videoCall?.connect() else {
              self.callError = "WebRtcConnection failed to connect"
              Logger.error("Setup failed: WebRtcConnection is nil")
              return
          }
          self.webRtcConnection = webRtcConnection

          Logger.debug("Instantiating and assigning renderers...")
          let local = Renderer()
          let remote = Renderer()

          webRtcConnection.localVideoRenderer = local
          webRtcConnection.remoteVideoRenderer = remote

          self.localRenderer = local
          self.remoteRenderer = remote

          Logger.info("Starting WebRTC room...")
          await webRtcConnection.startRoom()
          Logger.info("Call setup complete.")
      }
    }
}

@Suite(.serialized) struct DemoTransferFlowTests {
    /// Alice transfers the demo's call to Billing; the demo follows it to Bob with its own
    /// handlers (none added by the test), sees Bob's picture, and goes home only when Bob hangs up.
    @Test func theDemoFollowsATransferToTheSecondAgent() async throws {
        let backend = try await Backend.start()
        let alice = try await backend.agent(name: "Alice", queues: ["default"])
        let bob = try await backend.agent(name: "Bob", queues: ["Billing"])
        let sdk = try backend.sdk()
        let app = DemoApp(sdk: sdk)
        let main = try #require(await sdk.createVideoCall())
        app.append(.queueScreen(rtcId: main.rtcId, isTransferred: false))
        try await eventually(.seconds(20), "Alice's picture on the first call screen") {
            app.callScreens.first?.remoteRenderer.map { $0.framesRendered > 3 } ?? false
        }
        let aliceCall = try #require(alice.call(rtcId: main.rtcId))
        try await aliceCall.transfer(to: .queue("Billing"))
        try await eventually(.seconds(20), "Bob's picture on the second call screen") {
            app.callScreens.count == 2 && (app.callScreens[1].remoteRenderer?.framesRendered ?? 0) > 3
        }
        let leg = try #require(app.callScreens[1].videoCall)
        #expect(leg.rtcId != main.rtcId && main.isEnded)
        #expect(app.visited == [.queueScreen(rtcId: main.rtcId, isTransferred: false), .callScreen(rtcId: main.rtcId),
                                .queueScreen(rtcId: leg.rtcId, isTransferred: true), .callScreen(rtcId: leg.rtcId)])
        #expect(backend.service.script.dialCount(rtcId: leg.rtcId) == 0, "the transferred leg is never dialed")
        let bobCall = try #require(bob.call(rtcId: leg.rtcId))
        await bobCall.hangup()
        try await eventually(.seconds(10), "home after Bob's hangup") { app.visited.last == .mainScreen }
        #expect(app.visited.filter { $0 == .mainScreen }.count == 1, "home once, at the end: \(app.visited)")
        #expect(sdk.modules.onCallEvent.isEmpty, "the CallScreen cleared the handlers on the last CallEnded")
        await alice.logout()
        await bob.logout()
        await backend.close()
    }
}
