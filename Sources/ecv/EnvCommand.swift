import Foundation

/// An ECV environment as the seed demo app keeps them: URLs, queue-mode flags and the call
/// attributes the caller must fill in.
struct Environment: Codable, Equatable {
    struct CallAttribute: Codable, Equatable {
        var key: String
        var label: String
        /// "select" (choose one of `values`, the first preselected) or "text" (free, `defaultValue`).
        var type: String
        var values: [String]
        var defaultValue: String?
    }

    var name: String
    var serviceUrl: String
    var webrtcUrl: String?
    var signalingUrl: String?
    var useQueueSocket: Bool
    var useQueueInfo: Bool
    var queues: [String]
    var callAttributes: [CallAttribute]

    /// Checks `attributes` against the declared ones: unknown selections and missing values fail.
    func resolveAttributes(_ given: [String: String]) throws(CLIError) -> [String: String] {
        var result = given
        for attribute in callAttributes {
            if let value = given[attribute.key] {
                if attribute.type == "select", !attribute.values.contains(value) {
                    throw .usage("attribute \(attribute.key) (\(attribute.label)) must be one of \(attribute.values.joined(separator: ", ")), not '\(value)'")
                }
            } else if attribute.type == "select", let first = attribute.values.first {
                result[attribute.key] = first
            } else if let value = attribute.defaultValue {
                result[attribute.key] = value
            }
        }
        return result
    }

    /// The seed's Danamon flavor: its four attached-data fields, against a local service.
    static let danamonExample = Environment(
        name: "danamon-local", serviceUrl: "http://127.0.0.1:8080", useQueueSocket: false, useQueueInfo: true,
        queues: ["default"], callAttributes: [
            CallAttribute(key: "video_flow", label: "Video Flow", type: "select", values: ["ETB", "NTB"]),
            CallAttribute(key: "video_channel", label: "Video Channel", type: "select",
                          values: ["Registration", "Reactivation", "Activation", "Saving (2.0)", "Credit Card"]),
            CallAttribute(key: "video_application", label: "Video Application", type: "select", values: ["DBP 2.0"]),
            CallAttribute(key: "video_language", label: "Video Language", type: "select", values: ["id", "en"]),
        ])
}

/// Environments persisted under the user's config directory (`$XDG_CONFIG_HOME/ecvkit`).
struct EnvironmentStore {
    struct Contents: Codable {
        var current: String?
        var environments: [Environment]
    }

    let url: URL

    init() {
        let base = ProcessInfo.processInfo.environment["XDG_CONFIG_HOME"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".config")
        url = base.appendingPathComponent("ecvkit/environments.json")
    }

    func load() -> Contents {
        guard let data = try? Data(contentsOf: url), let contents = try? JSONDecoder().decode(Contents.self, from: data) else {
            return Contents(current: nil, environments: [Environment.danamonExample])
        }
        return contents
    }

    func save(_ contents: Contents) throws(CLIError) {
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(contents).write(to: url, options: .atomic)
        } catch {
            throw .failed("cannot save \(url.path): \(error.localizedDescription)")
        }
    }

    func environment(named name: String?) throws(CLIError) -> Environment? {
        let contents = load()
        guard let name = name ?? contents.current else { return nil }
        guard let environment = contents.environments.first(where: { $0.name == name }) else {
            throw .usage("no environment '\(name)'; `ecv env list` shows them")
        }
        return environment
    }
}

/// `ecv env list|add|use|remove`.
enum EnvCommand {
    static let usage = """
        ecv env list             the saved environments (* marks the current one)
        ecv env add NAME --service-url URL [--webrtc-url URL] [--signaling-url URL]
                  [--queue-mode socket|info|legacy] [--queue Q…]
                  [--attr-select KEY=Label:v1,v2,…]… [--attr-text KEY=Label:default]…
        ecv env use NAME         make NAME the default for `ecv call`
        ecv env remove NAME
        """

    static func run(_ words: [String]) throws(CLIError) {
        guard let action = words.first else { throw .usage(usage) }
        let store = EnvironmentStore()
        var contents = store.load()
        var arguments = try Arguments(Array(words.dropFirst()), flags: [])
        switch action {
        case "list":
            try arguments.finish()
            for environment in contents.environments {
                let mark = environment.name == contents.current ? "*" : " "
                let mode = environment.useQueueSocket ? "socket" : environment.useQueueInfo ? "info" : "legacy"
                print("\(mark) \(environment.name)  \(environment.serviceUrl)  queue-mode=\(mode)"
                      + (environment.callAttributes.isEmpty ? "" : "  attributes: \(environment.callAttributes.map(\.key).joined(separator: ", "))"))
            }
        case "add":
            guard let name = arguments.positional.first else { throw .usage("ecv env add NAME --service-url URL …") }
            guard let serviceUrl = arguments.value("service-url") else { throw .usage("--service-url is required") }
            let mode = arguments.value("queue-mode") ?? "socket"
            guard ["socket", "info", "legacy"].contains(mode) else { throw .usage("--queue-mode takes socket, info or legacy") }
            var attributes: [Environment.CallAttribute] = []
            for spec in arguments.values("attr-select") { attributes.append(try parseAttribute(spec, type: "select")) }
            for spec in arguments.values("attr-text") { attributes.append(try parseAttribute(spec, type: "text")) }
            let environment = Environment(name: name, serviceUrl: serviceUrl, webrtcUrl: arguments.value("webrtc-url"),
                                          signalingUrl: arguments.value("signaling-url"), useQueueSocket: mode == "socket",
                                          useQueueInfo: mode == "info", queues: arguments.values("queue"), callAttributes: attributes)
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
            throw .usage(usage)
        }
    }

    /// `KEY=Label:v1,v2` (select) or `KEY=Label:default` (text).
    private static func parseAttribute(_ spec: String, type: String) throws(CLIError) -> Environment.CallAttribute {
        guard let equals = spec.firstIndex(of: "="), let colon = spec[equals...].firstIndex(of: ":") else {
            throw .usage("attribute '\(spec)' must look like KEY=Label:\(type == "select" ? "v1,v2" : "default")")
        }
        let key = String(spec[..<equals]), label = String(spec[spec.index(after: equals)..<colon])
        let rest = String(spec[spec.index(after: colon)...])
        return type == "select"
            ? .init(key: key, label: label, type: "select", values: rest.split(separator: ",").map(String.init), defaultValue: nil)
            : .init(key: key, label: label, type: "text", values: [], defaultValue: rest)
    }
}
