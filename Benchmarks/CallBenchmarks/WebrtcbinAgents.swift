import BenchmarkSupport
import ECVProtocol
import Foundation
import GLibCore
import GStreamer
import Soup

/// `bench-call webrtcbin-agents`: the `webrtcbin` stack of `bench-call cost` (`--stacks ecvkit,webrtcbin,pion`).
/// N agent bots whose calls are bare `webrtcbin` pipelines (`WebrtcbinCall`): what webrtcbin 1.22 itself
/// costs for the same job as `cost-agents`' bots, the floor under ECVKit's. Speaks the same agent
/// protocol to the service and the same lines to the parent: `ready`, then `connected N recording M
/// loop-ms P` once a second. `--mode record|receive`.
enum WebrtcbinAgents {
    /// The process's calls, for the status line.
    struct Counters: Sendable {
        var connected = 0
        /// Recordings of ended calls whose files are not closed yet: still recording for the parent,
        /// which stops the process once nothing records.
        var finishing = 0
    }

    /// The calls of every bot of the process by rtcId, and the ids whose end came before their set-up finished.
    struct CallTable: Sendable {
        var live: [String: WebrtcbinCall] = [:]
        var ended: Set<String> = []
    }

    static func run(options: Options) async throws {
        guard let base = options.values["service-url"] else { throw BenchmarkError.badInput("--service-url is required") }
        let count = try options.int("bots", default: 1, range: 1...CallCostBenchmark.maximumCalls)
        let first = try options.int("first", default: 0, range: 0...1_000_000)
        let mode = options.values["mode"] ?? "record"
        guard mode == "record" || mode == "receive" else { throw BenchmarkError.badInput("--mode is record or receive for webrtcbin, got \(mode)") }
        let directory = URL(fileURLWithPath: options.values["dir"] ?? NSTemporaryDirectory())
        try GStreamerRuntime.ensureInitialized()
        let counters = Locked(Counters())
        let calls = Locked(CallTable())
        // The service answers a bot's requests one at a time per connection; one client per bot, as the SDK has.
        for index in 0..<count {
            let bot = WebrtcbinBot(base: base, name: "webrtcbin \(first + index)", record: mode == "record" ? directory : nil,
                                   counters: counters, calls: calls)
            try await bot.start()
        }
        emit("ready")
        let loop = MainLoopLatency()
        while true {
            try await Task.sleep(for: .seconds(1))
            let recording = calls.value.live.values.filter(\.isRecording).count + counters.value.finishing
            emit("connected \(counters.value.connected) recording \(recording) loop-ms \(loop.take())")
        }
    }
}

/// One agent bot (docs/protocol.md §3): login, the agent socket, ready on the default queue, accept
/// every offer, a `WebrtcbinCall` for each connected call, ended with its `call_ended`.
final class WebrtcbinBot: Sendable {
    private let base: String
    private let name: String
    private let record: URL?
    private let counters: Locked<WebrtcbinAgents.Counters>
    private let calls: Locked<WebrtcbinAgents.CallTable>
    private let client = HTTPClient()

    init(base: String, name: String, record: URL?, counters: Locked<WebrtcbinAgents.Counters>, calls: Locked<WebrtcbinAgents.CallTable>) {
        self.base = base
        self.name = name
        self.record = record
        self.counters = counters
        self.calls = calls
    }

    /// Logs in and returns once the service says the bot is ready.
    func start() async throws {
        let login = try await client.send(try HTTPRequest.json("POST", base + ECVAPI.agentLogin, body: AgentLoginRequest(name: name))).json(AgentLoginResponse.self)
        var address = URLComponents(string: base.replacingOccurrences(of: "http://", with: "ws://").replacingOccurrences(of: "https://", with: "wss://")
                                    + ECVAPI.agentSocket)
        address?.queryItems = [URLQueryItem(name: ECVAPI.agentIdQueryName, value: login.agentId), URLQueryItem(name: ECVAPI.tokenQueryName, value: login.token)]
        guard let url = address?.string else { throw BenchmarkError.badInput("bad service URL \(base)") }
        let socket = try await WebSocketClient.connect(url: url)
        let ready = OneShot<Void, Never>()
        Task { await self.serve(socket, token: login.token, ready: ready) }
        try send(AgentRequest(.ready(queues: ["default"]), requestId: "ready"), on: socket)
        await ready.value()
    }

    private func send(_ request: AgentRequest, on socket: WebSocketConnection) throws {
        try socket.send(text: String(decoding: try JSONEncoder().encode(request), as: UTF8.self))
    }

    private func serve(_ socket: WebSocketConnection, token: String, ready: OneShot<Void, Never>) async {
        for await event in socket.events {
            guard case .text(let text) = event,
                  let decoded = try? JSONDecoder().decode(AgentEvent.self, from: Data(text.utf8)) else { continue } // why: frames this bot has no use for
            switch decoded {
            case .agentState(let update) where update.state == .ready:
                _ = ready.resolve(.success(()))
            case .offer(let offer):
                // why: a failed accept leaves the offer to time out, which the parent sees as a call that never connects
                try? send(AgentRequest(.accept(rtcId: offer.rtcId)), on: socket)
            case .callConnected(let rtcId, _):
                let record = self.record?.appendingPathComponent("\(rtcId).mkv")
                let base = self.base, client = self.client, counters = self.counters, calls = self.calls
                Task {
                    do {
                        let call = try await WebrtcbinCall.start(client: client, base: base, token: token, rtcId: rtcId, record: record, counters: counters)
                        // A call that ended while it was set up is ended at once.
                        let ended = calls.withLock { calls in
                            if calls.ended.remove(rtcId) != nil { return true }
                            calls.live[rtcId] = call
                            return false
                        }
                        if ended { call.end() }
                    } catch {
                        emit("event \(rtcId) failed \(String(describing: error).replacingOccurrences(of: "\n", with: " "))")
                    }
                }
            case .callEnded(let rtcId, let reason):
                let call = calls.withLock { calls in
                    guard let call = calls.live.removeValue(forKey: rtcId) else {
                        calls.ended.insert(rtcId)
                        return nil as WebrtcbinCall?
                    }
                    return call
                }
                call?.end()
                emit("event \(rtcId) ended \(reason.rawValue)")
            case .error(_, let code, _):
                emit("event - error \(code.rawValue)")
            default:
                break
            }
        }
    }
}
