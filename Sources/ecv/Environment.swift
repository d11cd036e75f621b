import ECV
import ECVProtocol
import Foundation

/// An ECV environment as the seed's demo app keeps them (its `Build.swift` flavours): URLs, the
/// queue mode, the polling settings, the queues offered, and the call attributes the caller fills in.
///
/// In `environments.json` only `name` and `serviceUrl` are required. Left out, the queue flags and
/// polling settings are what `ECVSdkConfiguration` would use (nil here means exactly that), and
/// there are no queues or attributes. Decoding checks every field and names the one at fault.
struct Environment: Equatable {
    var name: String
    var serviceUrl: String
    var webrtcUrl: String?
    var signalingUrl: String?
    var useQueueSocket: Bool = true
    var useQueueInfo: Bool = false
    /// Legacy polling interval, ms (nil: the SDK's default).
    var waitForRoomIntervalDelay: Int?
    /// Legacy polling endpoint, ending with the query key the rtcId is appended to (nil: the SDK's).
    var waitForRoomIntervalEndpoint: String?
    /// Queue-info polling interval, ms (nil: the SDK's default).
    var queueInfoIntervalDelay: Int?
    /// Queue-info endpoint, a path on `serviceUrl` or a URL (nil: the SDK's).
    var queueInfoEndpoint: String?
    var queues: [String] = []
    var callAttributes: [EnvironmentCallAttribute] = []

    /// `socket`, `info` or `legacy`: which wait the flags select, by the SDK's precedence.
    var queueMode: String { useQueueSocket ? "socket" : useQueueInfo ? "info" : "legacy" }

    /// Gives `configuration` this environment's polling settings; those the environment leaves
    /// out keep the configuration's (the SDK's defaults, derived from its `serviceUrl`).
    func applyPollingSettings(to configuration: inout ECVSdkConfiguration) {
        if let waitForRoomIntervalDelay { configuration.waitForRoomIntervalDelay = waitForRoomIntervalDelay }
        if let waitForRoomIntervalEndpoint { configuration.waitForRoomIntervalEndpoint = waitForRoomIntervalEndpoint }
        if let queueInfoIntervalDelay { configuration.queueInfoIntervalDelay = queueInfoIntervalDelay }
        if let queueInfoEndpoint { configuration.queueInfoEndpoint = queueInfoEndpoint }
    }

    /// The polling settings that differ from the SDK's defaults, as `ecv env list` shows them.
    var customPollingSettings: [(field: CodingKeys, value: String)] {
        let defaults = ECVSdkConfiguration(name: name, serviceUrl: serviceUrl)
        var applied = defaults
        applyPollingSettings(to: &applied)
        let settings: [(CodingKeys, String, String)] = [
            (.waitForRoomIntervalDelay, "\(applied.waitForRoomIntervalDelay)", "\(defaults.waitForRoomIntervalDelay)"),
            (.waitForRoomIntervalEndpoint, applied.waitForRoomIntervalEndpoint, defaults.waitForRoomIntervalEndpoint),
            (.queueInfoIntervalDelay, "\(applied.queueInfoIntervalDelay)", "\(defaults.queueInfoIntervalDelay)"),
            (.queueInfoEndpoint, applied.queueInfoEndpoint, defaults.queueInfoEndpoint),
        ]
        return settings.filter { $0.1 != $0.2 }.map { ($0.0, $0.1) }
    }

    /// The seed's Danamon flavor: its four attached-data fields, against a local service.
    static let danamonExample = Environment(
        name: "danamon-local", serviceUrl: "http://127.0.0.1:8080", useQueueSocket: false, useQueueInfo: true,
        queues: ["default"], callAttributes: [
            EnvironmentCallAttribute(key: "video_flow", displayName: "Video Flow", values: ["ETB", "NTB"]),
            EnvironmentCallAttribute(key: "video_channel", displayName: "Video Channel",
                                     values: ["Registration", "Reactivation", "Activation", "Saving (2.0)", "Credit Card"]),
            EnvironmentCallAttribute(key: "video_application", displayName: "Video Application", values: ["DBP 2.0"]),
            EnvironmentCallAttribute(key: "video_language", displayName: "Video Language", values: ["id", "en"]),
        ])

    // MARK: Validation

    /// What is wrong with one field: the decoder reports it under the JSON path, `ecv env add`
    /// under the option that set it.
    struct Problem: Error, Equatable {
        var field: CodingKeys
        /// The element at fault, for `queues` and `callAttributes`.
        var index: Int?
        var message: String
    }

    /// Polling delays, ms: below 100 a waiting caller hammers the service, above ten minutes it
    /// would learn of its agent long after the agent gave up.
    static let pollingDelayRange = 100...600_000
    /// Endpoints and URLs longer than this are not configuration but a mistake (or an attack).
    static let maxURLLength = 2048

    /// The first problem, in field order, or nil for a usable environment.
    func firstProblem() -> Problem? {
        if name.trimmingCharacters(in: .whitespaces).isEmpty { return Problem(field: .name, message: "must not be empty") }
        if name.count > 100 { return Problem(field: .name, message: "must be at most 100 characters") }
        let urls: [(CodingKeys, String?, Set<String>)] = [
            (.serviceUrl, serviceUrl, ["http", "https"]), (.webrtcUrl, webrtcUrl, ["http", "https"]),
            (.signalingUrl, signalingUrl, ["http", "https", "ws", "wss"]),
        ]
        for (field, url, schemes) in urls {
            if let url, let problem = Self.urlProblem(url, schemes: schemes) { return Problem(field: field, message: problem) }
        }
        for (field, delay) in [(CodingKeys.waitForRoomIntervalDelay, waitForRoomIntervalDelay), (.queueInfoIntervalDelay, queueInfoIntervalDelay)] {
            if let delay, !Self.pollingDelayRange.contains(delay) {
                return Problem(field: field, message: "must be \(Self.pollingDelayRange.lowerBound) to \(Self.pollingDelayRange.upperBound) milliseconds, not \(delay)")
            }
        }
        if let endpoint = waitForRoomIntervalEndpoint {
            if let problem = Self.endpointProblem(endpoint) { return Problem(field: .waitForRoomIntervalEndpoint, message: problem) }
            if !endpoint.hasSuffix("=") {
                return Problem(field: .waitForRoomIntervalEndpoint,
                               message: "must end with the query key the rtcId is appended to, e.g. /api/WaitForRoomInterval?rtcId=, not '\(endpoint)'")
            }
        }
        if let endpoint = queueInfoEndpoint, let problem = Self.endpointProblem(endpoint) {
            return Problem(field: .queueInfoEndpoint, message: problem)
        }
        if let index = queues.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces).isEmpty }) {
            return Problem(field: .queues, index: index, message: "a queue name must not be empty")
        }
        // The first attribute whose prefix fails is the one at fault: invalid itself, or
        // declaring a key an earlier one already did.
        for index in callAttributes.indices {
            do {
                try callAttributes[...index].validate()
            } catch {
                return Problem(field: .callAttributes, index: index, message: error.description)
            }
        }
        return nil
    }

    private static func urlProblem(_ url: String, schemes: Set<String>) -> String? {
        let expected = schemes.sorted().map { "\($0)://" }.joined(separator: " or ")
        guard url.utf8.count <= maxURLLength else { return "is longer than \(maxURLLength) bytes" }
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(), schemes.contains(scheme),
              let host = components.host, !host.isEmpty else {
            return "must be an \(expected) URL, not '\(url)'"
        }
        return nil
    }

    /// An endpoint is a path on `serviceUrl` (`/…`) or a whole http(s) URL.
    private static func endpointProblem(_ endpoint: String) -> String? {
        guard endpoint.utf8.count <= maxURLLength else { return "is longer than \(maxURLLength) bytes" }
        if endpoint.hasPrefix("/") {
            guard URLComponents(string: endpoint) != nil, !endpoint.contains(where: \.isWhitespace) else {
                return "is not a valid URL path: '\(endpoint)'"
            }
            return nil
        }
        if let problem = urlProblem(endpoint, schemes: ["http", "https"]) {
            return "must be a path starting with / or an http:// or https:// URL (\(problem))"
        }
        return nil
    }
}

extension Environment: Codable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, serviceUrl, webrtcUrl, signalingUrl, useQueueSocket, useQueueInfo
        case waitForRoomIntervalDelay, waitForRoomIntervalEndpoint, queueInfoIntervalDelay, queueInfoEndpoint
        case queues, callAttributes
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        serviceUrl = try container.decode(String.self, forKey: .serviceUrl)
        webrtcUrl = try container.decodeIfPresent(String.self, forKey: .webrtcUrl)
        signalingUrl = try container.decodeIfPresent(String.self, forKey: .signalingUrl)
        useQueueSocket = try container.decodeIfPresent(Bool.self, forKey: .useQueueSocket) ?? true
        useQueueInfo = try container.decodeIfPresent(Bool.self, forKey: .useQueueInfo) ?? false
        waitForRoomIntervalDelay = try container.decodeIfPresent(Int.self, forKey: .waitForRoomIntervalDelay)
        waitForRoomIntervalEndpoint = try container.decodeIfPresent(String.self, forKey: .waitForRoomIntervalEndpoint)
        queueInfoIntervalDelay = try container.decodeIfPresent(Int.self, forKey: .queueInfoIntervalDelay)
        queueInfoEndpoint = try container.decodeIfPresent(String.self, forKey: .queueInfoEndpoint)
        queues = try container.decodeIfPresent([String].self, forKey: .queues) ?? []
        callAttributes = try container.decodeIfPresent([EnvironmentCallAttribute].self, forKey: .callAttributes) ?? []
        if let problem = firstProblem() {
            let path = container.codingPath + [problem.field as any CodingKey] + (problem.index.map { [IndexKey($0)] } ?? [])
            throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: problem.message))
        }
    }
}
