import ECV
import ECVProtocol
import ECVService
import Foundation
import GLibCore
import GStreamer

/// `ecv serve`: the reference ECV service, standalone, until Ctrl-C.
enum ServeCommand {
    static let usage = """
        ecv serve [options]      run the reference ECV service (REST, queue socket, rooms, collider, agents)
          --host ADDR              listen address (default 127.0.0.1, this machine only; 0.0.0.0 for every interface)
          --port N                 HTTP port (default 8080)
          --backend 1.5|1.75       backend version to behave like (default 1.75)
          --queue NAME             a queue (repeatable; the first is the default queue)
          --ice-server URL         advertised in join answers (repeatable), e.g. stun:stun.example.com:3478
          --turn-username U --turn-credential C   credentials for turn: servers
          --agent-secret S         agents must present this secret to log in (repeatable)
          --agent-secret-file F    the same, one secret per line of F (keeps secrets out of `ps`)
          --open-agents            let agents log in without a secret (demos, labs); one of these three is required
          --offer-timeout SEC      seconds an offer rings before re-routing (default 15)
          --attr-default KEY=VALUE attached data a DialEx without KEY gets (repeatable; replaces the seed's Danamon
                                   defaults video_flow=NTB, video_channel=Saving (1.0), video_application=DBP 1.0,
                                   video_language=id)
          --queue-attr-default QUEUE:KEY=VALUE   the same for calls dialed into QUEUE, instead (repeatable)
          --no-attr-defaults       fill no attached data (docs/protocol.md §1.3)
          --no-caller-tokens       issue no caller tokens: anyone who knows an rtcId acts for its caller (labs only)
          --tls-cert FILE --tls-key FILE   serve HTTPS and WSS with this PEM certificate (chain) and key
          --advertised-url URL     the base URL clients are given for rooms and signaling (wss_url), e.g.
                                   https://ecv.example.com behind a proxy (default: from each request's Host)
          --trusted-proxy ADDR     a TLS-terminating proxy's address (repeatable): its X-Forwarded-Proto: https
                                   makes the URLs handed out https:// and wss://
          --kyc-api-key KEY        open the identity-verification back office (/kyc/api, docs/protocol.md §7) to this key (repeatable)
          --log                    print the service's event log on stdout, each entry timestamped (as --log-level info)
        \(PeerServeOptions.help)
        \(LogOptions.help)
                                   (info or debug prints the event log; --log-format json prints it as JSON objects)
          Exits 1 at once when the service cannot start (a port in use, an address this host lacks), 0 after Ctrl-C or SIGTERM.
        """

    static let spec = OptionSpec(values: ["host", "port", "backend", "queue", "ice-server", "turn-username", "turn-credential", "agent-secret",
                                          "agent-secret-file", "offer-timeout", "attr-default", "queue-attr-default", "tls-cert", "tls-key",
                                          "advertised-url", "trusted-proxy", "kyc-api-key"],
                                 flags: ["log", "no-caller-tokens", "open-agents", "no-attr-defaults"]) + PeerServeOptions.spec + LogOptions.spec

    static func configuration(_ arguments: inout Arguments) throws(CLIError) -> ReferenceServiceConfiguration {
        var configuration = ReferenceServiceConfiguration()
        switch arguments.value("backend") ?? "1.75" {
        case "1.5": configuration.backendVersion = .v1_5
        case "1.75": configuration.backendVersion = .v1_75
        case let other: throw .usage("--backend takes 1.5 or 1.75, not '\(other)'")
        }
        let queues = arguments.values("queue")
        // A start-up failure (exit 1, like the ACD's own checks at start), named by the flag typed.
        if queues.contains("") { throw .failed("--queue needs a queue name, not an empty string") }
        if !queues.isEmpty {
            configuration.queues = queues
            configuration.defaultQueue = queues[0]
        }
        let username = arguments.value("turn-username"), credential = arguments.value("turn-credential")
        configuration.iceServers = arguments.values("ice-server").map { url in
            url.hasPrefix("turn") ? ECVProtocol.ICEServer(urls: [url], username: username, credential: credential) : ECVProtocol.ICEServer(urls: [url])
        }
        configuration.agentSecrets = arguments.values("agent-secret")
        configuration.verification.apiKeys = arguments.values("kyc-api-key")
        for file in arguments.values("agent-secret-file").map(Arguments.absolute) {
            // Unreadable: the else branch reports it.
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw .usage("--agent-secret-file: cannot read \(file)")
            }
            let secrets = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard !secrets.isEmpty else { throw .usage("--agent-secret-file: \(file) holds no secret") }
            configuration.agentSecrets += secrets
        }
        if let timeout = try arguments.positive("offer-timeout") { configuration.offerTimeout = timeout }
        let defaults = try arguments.values("attr-default").map { text throws(CLIError) in try keyValue(text, "--attr-default") }
        if !defaults.isEmpty { configuration.acd.attributeDefaults = Dictionary(defaults) { $1 } }
        for text in arguments.values("queue-attr-default") {
            guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else {
                throw .usage("--queue-attr-default takes QUEUE:KEY=VALUE, not '\(text)'")
            }
            let (key, value) = try keyValue(String(text[text.index(after: colon)...]), "--queue-attr-default")
            configuration.acd.queueAttributeDefaults[String(text[..<colon]), default: [:]][key] = value
        }
        if username != nil || credential != nil, !configuration.iceServers.contains(where: { $0.urls.contains { $0.hasPrefix("turn") } }) {
            throw .usage("--turn-username and --turn-credential need a turn: or turns: --ice-server")
        }
        switch (arguments.path("tls-cert"), arguments.path("tls-key")) {
        case (nil, nil): break
        case (let certificate?, let key?):
            do { try configuration.serveTLS(certificateFile: certificate, privateKeyFile: key) } catch {
                throw .usage("--tls-cert/--tls-key: \(error)")
            }
        default: throw .usage("--tls-cert and --tls-key go together")
        }
        configuration.advertisedBaseURL = arguments.value("advertised-url")
        configuration.trustedProxies = arguments.values("trusted-proxy")
        try PeerServeOptions.apply(&arguments, to: &configuration)
        if let problem = configuration.problem() {
            throw .usage(problem.replacingOccurrences(of: "advertisedBaseURL", with: "--advertised-url")
                .replacingOccurrences(of: "trusted proxy", with: "--trusted-proxy"))
        }
        return configuration
    }

    private static func keyValue(_ text: String, _ option: String) throws(CLIError) -> (String, String) {
        guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
            throw .usage("\(option) takes KEY=VALUE, not '\(text)'")
        }
        return (String(text[..<equals]), String(text[text.index(after: equals)...]))
    }

    static func run(_ words: [String]) async throws(CLIError) {
        var arguments = try Arguments(words, spec)
        try arguments.exclusive("open-agents", "agent-secret", because: "--open-agents admits agents without a secret")
        try arguments.exclusive("open-agents", "agent-secret-file", because: "--open-agents admits agents without a secret")
        var configuration = try configuration(&arguments)
        if arguments.flag("no-attr-defaults") {
            if !arguments.values("attr-default").isEmpty { throw .usage("--no-attr-defaults and --attr-default exclude each other") }
            configuration.acd.attributeDefaults = [:]
        }
        if arguments.flag("no-caller-tokens") { configuration.issuesCallerTokens = false }
        configuration.openAgents = arguments.flag("open-agents")
        if configuration.agentSecrets.isEmpty && !configuration.openAgents {
            throw .usage("agents need a secret: pass --agent-secret S, --agent-secret-file F, or --open-agents to admit any agent")
        }
        let host = arguments.value("host") ?? "127.0.0.1"
        let port = try arguments.int("port") ?? 8080
        let logFlag = arguments.flag("log")
        let logging = try LogOptions.read(&arguments)
        if logFlag && logging.level == .error { throw .usage("--log and -q exclude each other") }
        try arguments.finish()
        guard (0...65535).contains(port) else { throw .usage("--port takes 0…65535, not \(port)") }
        LogOptions.install(logging)
        if logFlag || logging.level <= .info {
            let json = logging.json
            configuration.logHandler = { entry in say(json ? entry.jsonLine : entry.timestampedLine) }
        }
        Interrupts.install()
        // Built and started here, not in a task awaited after Ctrl-C: a start-up failure (a port
        // in use, an address this host lacks, a bad queue name) ends the command at once, exit 1.
        let service: ReferenceService
        do {
            service = try ReferenceService(configuration: configuration)
            try await service.start(host: host, port: UInt16(port))
        } catch {
            throw .failed("the service cannot start: \(error)")
        }
        say(service.banner(listeningOn: host))
        await Interrupts.wait()
        await service.stop()
    }
}

/// SIGINT and SIGTERM (Ctrl-C, `kill`) as an event, so commands can shut down cleanly.
enum Interrupts {
    private struct State: Sendable {
        var installed = false
        var fired = false
        var waiters: [CheckedContinuation<Void, Never>] = []
        var sources: [SignalSourceBox] = []
    }
    private static let state = Locked(State())

    /// Catches SIGINT and SIGTERM from now on (idempotent): they no longer end the process, and
    /// `wait()` returns for one that came before it was called. A command installs this before
    /// it connects, so a Ctrl-C right after "ready" is a clean shutdown, not a kill.
    static func install() {
        state.withLock { state in
            guard !state.installed else { return }
            state.installed = true
            for signalNumber in [SIGINT, SIGTERM] {
                signal(signalNumber, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
                source.setEventHandler { Interrupts.fire() }
                source.resume()
                state.sources.append(SignalSourceBox(source: source))
            }
        }
    }

    /// Returns once SIGINT or SIGTERM arrived (at once if one already did).
    static func wait() async {
        install()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let already = state.withLock { state -> Bool in
                if state.fired { return true }
                state.waiters.append(continuation)
                return false
            }
            if already { continuation.resume() }
        }
    }

    /// Stops the command as SIGINT would, for a reason of its own (its output was closed).
    static func stop(because reason: String) {
        printErr("ecv: \(reason); stopping")
        fire()
    }

    private static func fire() {
        let waiters = state.withLock { state in
            state.fired = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Signal sources must outlive the wait; DispatchSource is thread-safe.
    // @unchecked Sendable: the source is only resumed/cancelled through its own thread-safe API.
    struct SignalSourceBox: @unchecked Sendable { let source: any DispatchSourceSignal }
}

extension ServiceLogEntry {
    /// `2026-12-06T20:51:07.042Z #12 [rest] …`: when, in which order, what.
    var timestampedLine: String { "\(LogOptions.timestamp(time)) \(description)" }

    var jsonLine: String {
        var fields: [String: any Sendable] = ["time": LogOptions.timestamp(time), "sequence": sequence, "category": category.rawValue,
                                              "message": message]
        if let rtcId { fields["rtcId"] = rtcId }
        return NDJSON.line(fields)
    }
}
