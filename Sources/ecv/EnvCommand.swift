import ECV
import Foundation

/// `ecv env list|add|use|remove`.
enum EnvCommand {
    static let usage = """
        ecv env list|add|use|remove   saved environments: service URLs, queue mode, polling, call attributes
        ecv env list             the saved environments (* marks the current one)
        ecv env add NAME --service-url URL [--webrtc-url URL] [--signaling-url URL]
                  [--queue-mode socket|info|legacy] [--queue Q…]
                  [--wait-for-room-interval-delay MS] [--wait-for-room-interval-endpoint PATH?KEY=]
                  [--queue-info-interval-delay MS] [--queue-info-endpoint PATH]
                  [--attr-select KEY=Label:v1,v2,…]… [--attr-text KEY=Label:default]…
                  (delays in ms, \(Environment.pollingDelayRange.lowerBound) to \(Environment.pollingDelayRange.upperBound); an endpoint is a path on the service URL or a URL)
        ecv env use NAME         make NAME the default for `ecv call`
        ecv env remove NAME
        """

    static let spec = OptionSpec(values: ["service-url", "webrtc-url", "signaling-url", "queue-mode", "queue", "wait-for-room-interval-delay",
                                          "wait-for-room-interval-endpoint", "queue-info-interval-delay", "queue-info-endpoint",
                                          "attr-select", "attr-text"])

    static func run(_ words: [String]) throws(CLIError) {
        guard let action = words.first else { throw .usage("give an action: list, add, use or remove (ecv env --help)") }
        let store = EnvironmentStore()
        var contents = try store.load()
        var arguments = try Arguments(Array(words.dropFirst()), spec)
        switch action {
        case "list":
            try arguments.finish()
            for environment in contents.environments { print(listLine(environment, current: contents.current)) }
        case "add":
            guard let name = arguments.positional.first else { throw .usage("ecv env add NAME --service-url URL …") }
            let environment = try environment(named: name, from: &arguments)
            try arguments.finish()
            contents.environments.removeAll { $0.name == name }
            contents.environments.append(environment)
            try store.save(contents)
            print("saved environment \(name)")
        case "use":
            guard let name = arguments.positional.first else { throw .usage("ecv env use NAME") }
            try arguments.finish()
            guard contents.environments.contains(where: { $0.name == name }) else { throw .usage("no environment '\(name)'") }
            contents.current = name
            try store.save(contents)
            print("current environment: \(name)")
        case "remove":
            guard let name = arguments.positional.first else { throw .usage("ecv env remove NAME") }
            try arguments.finish()
            contents.environments.removeAll { $0.name == name }
            if contents.current == name { contents.current = nil }
            try store.save(contents)
            print("removed environment \(name)")
        default:
            throw .usage("unknown action '\(action)': list, add, use or remove (ecv env --help)")
        }
    }

    /// `ecv env add`'s options as an environment, checked as the file's would be (by
    /// `Environment.firstProblem()`), each problem named by the option that caused it.
    private static func environment(named name: String, from arguments: inout Arguments) throws(CLIError) -> Environment {
        guard let serviceUrl = arguments.value("service-url") else { throw .usage("--service-url is required") }
        let mode = arguments.value("queue-mode") ?? "socket"
        guard ["socket", "info", "legacy"].contains(mode) else { throw .usage("--queue-mode takes socket, info or legacy") }
        var attributes: [EnvironmentCallAttribute] = []
        for spec in arguments.values("attr-select") { attributes.append(try parseAttribute(spec, type: .select)) }
        for spec in arguments.values("attr-text") { attributes.append(try parseAttribute(spec, type: .text)) }
        let environment = Environment(
            name: name, serviceUrl: serviceUrl, webrtcUrl: arguments.value("webrtc-url"), signalingUrl: arguments.value("signaling-url"),
            useQueueSocket: mode == "socket", useQueueInfo: mode == "info",
            waitForRoomIntervalDelay: try arguments.int(option(for: .waitForRoomIntervalDelay)),
            waitForRoomIntervalEndpoint: arguments.value(option(for: .waitForRoomIntervalEndpoint)),
            queueInfoIntervalDelay: try arguments.int(option(for: .queueInfoIntervalDelay)),
            queueInfoEndpoint: arguments.value(option(for: .queueInfoEndpoint)),
            queues: arguments.values("queue"), callAttributes: attributes)
        guard let problem = environment.firstProblem() else { return environment }
        switch problem.field {
        case .name: throw .usage("environment name: \(problem.message)")
        case .callAttributes: throw .usage("--attr-select/--attr-text: \(problem.message)")
        case .queues: throw .usage("--queue: \(problem.message)")
        default: throw .usage("--\(option(for: problem.field)): \(problem.message)")
        }
    }

    /// The option that sets a field: `waitForRoomIntervalDelay` → `wait-for-room-interval-delay`.
    private static func option(for field: Environment.CodingKeys) -> String {
        field.rawValue.reduce(into: "") { option, character in
            option += character.isUppercase ? "-" + character.lowercased() : String(character)
        }
    }

    /// `* name  URL  queue-mode=…`, then the polling settings that are not the SDK's defaults and
    /// the attribute keys.
    private static func listLine(_ environment: Environment, current: String?) -> String {
        let mark = environment.name == current ? "*" : " "
        var line = "\(mark) \(environment.name)  \(environment.serviceUrl)  queue-mode=\(environment.queueMode)"
        for (field, value) in environment.customPollingSettings { line += "  \(option(for: field))=\(value)" }
        if !environment.callAttributes.isEmpty {
            line += "  attributes: \(environment.callAttributes.map(\.key).joined(separator: ", "))"
        }
        return line
    }

    /// `KEY=Label:v1,v2` (select) or `KEY=Label:default` (text).
    private static func parseAttribute(_ spec: String, type: EnvironmentCallAttribute.InputType) throws(CLIError) -> EnvironmentCallAttribute {
        guard let equals = spec.firstIndex(of: "="), let colon = spec[equals...].firstIndex(of: ":") else {
            throw .usage("attribute '\(spec)' must look like KEY=Label:\(type == .select ? "v1,v2" : "default")")
        }
        let key = String(spec[..<equals]), displayName = String(spec[spec.index(after: equals)..<colon])
        let rest = String(spec[spec.index(after: colon)...])
        return switch type {
        case .select: EnvironmentCallAttribute(key: key, displayName: displayName, values: rest.split(separator: ",").map(String.init))
        case .text: EnvironmentCallAttribute(key: key, displayName: displayName, defaultValue: rest, type: .text)
        }
    }
}
