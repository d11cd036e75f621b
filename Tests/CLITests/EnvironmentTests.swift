import ECV
import Foundation
import MediaTestSupport
import Testing

/// A private `XDG_CONFIG_HOME` for the `ecv` processes of one test, so they read and write their
/// own `ecvkit/environments.json`.
struct PrivateConfigHome {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ecv-env-\(UUID().uuidString)")

    /// What to pass to `ECVProcess.run` and `RunningECV`.
    var environment: [String: String] { ["XDG_CONFIG_HOME": directory.path] }
    var environmentsFile: URL { directory.appendingPathComponent("ecvkit/environments.json") }

    func write(_ text: String) throws {
        try FileManager.default.createDirectory(at: environmentsFile.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: environmentsFile)
    }

    func contents() throws -> Data { try Data(contentsOf: environmentsFile) }

    /// The saved environment named `name`, as JSON.
    func savedEnvironment(named name: String) throws -> [String: Any]? {
        let document = try JSONSerialization.jsonObject(with: contents()) as? [String: Any]
        let environments = document?["environments"] as? [[String: Any]] ?? []
        return environments.first { $0["name"] as? String == name }
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}

/// `ecv env` and `ecv call --env` with the environments file as the seed's demo app has it:
/// per-environment polling settings, `EnvironmentCallAttribute`s, and a file that is never
/// silently replaced.
@Suite(.serialized) struct EnvironmentTests {
    /// A file with a syntax error on line 3 (a doubled comma).
    static let brokenOnLine3 = """
        {
          "environments": [
            {"name": "x",, "serviceUrl": "http://127.0.0.1:1"}
          ]
        }
        """

    @Test func aCorruptFileIsAnErrorNamingTheFileAndLineAndIsLeftUntouched() async throws {
        let home = PrivateConfigHome()
        defer { home.remove() }
        try home.write(Self.brokenOnLine3)
        let before = try home.contents()
        let commands = [["env", "list"], ["call", "--env", "x"], ["env", "add", "y", "--service-url", "http://127.0.0.1:1"]]
        for command in commands {
            let result = try await ECVProcess.run(command, environment: home.environment)
            #expect(result.status != 0, "\(command): \(result.stdout)")
            #expect(result.stderr.contains(home.environmentsFile.path), "\(command) names the file: \(result.stderr)")
            #expect(result.stderr.contains("line 3, column 18"), "\(command) names the place: \(result.stderr)")
            #expect(!result.stdout.contains("danamon-local"), "\(command) fell back to the built-in environment")
        }
        #expect(try home.contents() == before, "the file is left as it was")
    }

    @Test func aMissingFileIsTheBuiltInDanamonExample() async throws {
        let home = PrivateConfigHome()
        defer { home.remove() }
        let list = try await ECVProcess.run(["env", "list"], environment: home.environment)
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout.contains("danamon-local  http://127.0.0.1:8080  queue-mode=info  attributes: video_flow, video_channel"),
                "\(list.stdout)")
        #expect(!FileManager.default.fileExists(atPath: home.environmentsFile.path), "listing writes nothing")
    }

    /// Wrong types, an unknown attribute type and a missing field name the JSON path and the line.
    @Test func aWrongFieldNamesItsPathAndLine() async throws {
        let home = PrivateConfigHome()
        defer { home.remove() }
        let cases: [(document: String, expected: [String])] = [
            ("""
             {"environments": [
               {"name": "a", "serviceUrl": "http://127.0.0.1:1"},
               {"name": "b", "serviceUrl": "http://127.0.0.1:1",
                "queueInfoIntervalDelay": "fast"}
             ]}
             """, ["'environments[1].queueInfoIntervalDelay'", "expected a number", "line 4"]),
            ("""
             {"environments": [
               {"name": "a", "serviceUrl": "http://127.0.0.1:1"},
               {"name": "b", "serviceUrl": "http://127.0.0.1:1", "callAttributes": [
                 {"key": "NikNumber", "displayName": "Nik", "type": "txt"}
               ]}
             ]}
             """, ["'environments[1].callAttributes[0].type'", #"unknown value "txt""#, "line 4"]),
            ("""
             {"environments": [
               {"name": "a", "serviceUrl": "http://127.0.0.1:1"},
               {"name": "b"}
             ]}
             """, ["missing field 'environments[1].serviceUrl'", "line 3"]),
            ("""
             {"environments": [
               {"name": "a", "serviceUrl": "http://127.0.0.1:1", "callAttributes": [{"key": "video_flow", "displayName": "Video Flow"}]}
             ]}
             """, ["'environments[0].callAttributes[0].values'", "no values to choose from", "line 2"]),
            ("""
             {"environments": [
               {"name": "a", "serviceUrl": "http://127.0.0.1:1", "queueInfoIntervalDelay": 5}
             ]}
             """, ["'environments[0].queueInfoIntervalDelay'", "100 to 600000 milliseconds, not 5", "line 2"]),
        ]
        for (document, expected) in cases {
            try home.write(document)
            let result = try await ECVProcess.run(["env", "list"], environment: home.environment)
            #expect(result.status == 1, "\(document)")
            #expect(result.stderr.contains(home.environmentsFile.path), "\(result.stderr)")
            for text in expected { #expect(result.stderr.contains(text), "\(text) in: \(result.stderr)") }
        }
    }

    /// Files saved before the seed's names were adopted say `label`: they still load, and are
    /// written back with `displayName`.
    @Test func anOldFileWithLabelsStillLoadsAndIsSavedWithDisplayNames() async throws {
        let home = PrivateConfigHome()
        defer { home.remove() }
        try home.write("""
            {"current": "old", "environments": [{"name": "old", "serviceUrl": "http://127.0.0.1:1", "useQueueSocket": false,
              "useQueueInfo": true, "queues": ["default"], "callAttributes": [
                {"key": "video_flow", "label": "Video Flow", "type": "select", "values": ["ETB", "NTB"], "defaultValue": null}]}]}
            """)
        let invalid = try await ECVProcess.run(["call", "--attr", "video_flow=XYZ"], environment: home.environment)
        #expect(invalid.status == 2, "\(invalid.stderr)")
        #expect(invalid.stderr.contains("video_flow (Video Flow) must be one of ETB, NTB"), "\(invalid.stderr)")
        let add = try await ECVProcess.run(["env", "add", "new", "--service-url", "http://127.0.0.1:2"], environment: home.environment)
        #expect(add.status == 0, "\(add.stderr)")
        let attributes = try home.savedEnvironment(named: "old")?["callAttributes"] as? [[String: Any]]
        #expect(attributes?.first?["displayName"] as? String == "Video Flow")
        #expect(attributes?.first?["label"] == nil)
    }

    @Test func addWithPollingOptionsRoundTripsThroughListAndTheFile() async throws {
        let home = PrivateConfigHome()
        defer { home.remove() }
        let add = try await ECVProcess.run([
            "env", "add", "polling", "--service-url", "http://127.0.0.1:1", "--queue-mode", "info",
            "--wait-for-room-interval-delay", "5000", "--wait-for-room-interval-endpoint", "/custom/pollstatus?callid=",
            "--queue-info-interval-delay", "1500", "--queue-info-endpoint", "/custom/queueinfo",
            "--attr-text", "NikNumber=Nik Number (encrypted):123",
        ], environment: home.environment)
        #expect(add.status == 0, "\(add.stderr)")
        let saved = try #require(try home.savedEnvironment(named: "polling"))
        #expect(saved["waitForRoomIntervalDelay"] as? Int == 5000)
        #expect(saved["waitForRoomIntervalEndpoint"] as? String == "/custom/pollstatus?callid=")
        #expect(saved["queueInfoIntervalDelay"] as? Int == 1500)
        #expect(saved["queueInfoEndpoint"] as? String == "/custom/queueinfo")
        let attribute = (saved["callAttributes"] as? [[String: Any]])?.first
        #expect(attribute?["type"] as? String == "text" && attribute?["defaultValue"] as? String == "123")

        let plain = try await ECVProcess.run(["env", "add", "plain", "--service-url", "http://127.0.0.1:1"], environment: home.environment)
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(try home.savedEnvironment(named: "plain")?["queueInfoIntervalDelay"] == nil, "defaults are not written")

        let list = try await ECVProcess.run(["env", "list"], environment: home.environment)
        #expect(list.status == 0, "\(list.stderr)")
        let lines = list.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("  polling  http://127.0.0.1:1  queue-mode=info  wait-for-room-interval-delay=5000"
                               + "  wait-for-room-interval-endpoint=/custom/pollstatus?callid=  queue-info-interval-delay=1500"
                               + "  queue-info-endpoint=/custom/queueinfo  attributes: NikNumber"), "\(list.stdout)")
        #expect(lines.contains("  plain  http://127.0.0.1:1  queue-mode=socket"), "defaults are not shown: \(list.stdout)")
    }

    @Test func addRefusesPollingSettingsTheSDKCouldNotUse() async throws {
        let home = PrivateConfigHome()
        defer { home.remove() }
        let refusals: [(arguments: [String], expected: String)] = [
            (["--queue-info-interval-delay", "0"], "--queue-info-interval-delay: must be 100 to 600000 milliseconds, not 0"),
            (["--wait-for-room-interval-delay", "600001"], "--wait-for-room-interval-delay: must be 100 to 600000"),
            (["--queue-info-interval-delay", "soon"], "--queue-info-interval-delay takes a whole number"),
            (["--wait-for-room-interval-endpoint", "/api/poll"], "--wait-for-room-interval-endpoint: must end with the query key"),
            (["--queue-info-endpoint", "api/queueinfo"], "--queue-info-endpoint: must be a path starting with /"),
            (["--attr-select", "video_flow=Video Flow:"], "select attribute video_flow has no values"),
        ]
        for (arguments, expected) in refusals {
            let result = try await ECVProcess.run(["env", "add", "bad", "--service-url", "http://127.0.0.1:1"] + arguments,
                                                  environment: home.environment)
            #expect(result.status == 2 && result.stderr.contains(expected), "\(arguments): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: home.environmentsFile.path), "nothing was saved")
    }

    /// An environment's queue-info endpoint and interval reach the SDK: pointed at the legacy
    /// endpoint (whose answers never carry queue figures), the caller's `QueueInfoUpdated` events
    /// have no position, while the default endpoint's do; and the polls come at the environment's
    /// interval, not the SDK's 3 s.
    @Test func queueInfoSettingsOfTheEnvironmentReachTheSDK() async throws {
        let home = PrivateConfigHome()
        defer { home.remove() }
        let (service, base) = try await startLoopbackService()
        for (name, extra) in [("custom", ["--queue-info-endpoint", "/api/WaitForRoomInterval"]), ("standard", [])] {
            let add = try await ECVProcess.run(["env", "add", name, "--service-url", base, "--queue-mode", "info",
                                                "--queue-info-interval-delay", "150"] + extra, environment: home.environment)
            #expect(add.status == 0, "\(add.stderr)")
        }
        let custom = try await queueInfoUpdates(environment: "custom", home: home, count: 5)
        #expect(custom.allSatisfy { $0.position == nil }, "the legacy endpoint was polled: \(custom)")
        // Four sleeps of 150 ms lie between the first and the fifth poll; a late first event
        // (they are printed from a queue) can shorten the span a little, never by a whole sleep.
        let span = (custom.last?.time ?? 0) - (custom.first?.time ?? 0)
        #expect(span >= 0.45, "polled every 150 ms, not faster: \(custom)")
        let standard = try await queueInfoUpdates(environment: "standard", home: home, count: 2)
        #expect(standard.allSatisfy { $0.position != nil }, "the queue-info endpoint has figures: \(standard)")
        await service.stop()
    }

    /// The legacy polling endpoint and interval reach the SDK too: a path the service does not
    /// serve fails three polls in a row, and the error names that path. At the SDK's 3 s interval
    /// the three failures would take six seconds or more.
    @Test func legacyPollingSettingsOfTheEnvironmentReachTheSDK() async throws {
        let home = PrivateConfigHome()
        defer { home.remove() }
        let (service, base) = try await startLoopbackService()
        let add = try await ECVProcess.run(["env", "add", "legacy", "--service-url", base, "--queue-mode", "legacy",
                                            "--wait-for-room-interval-delay", "100",
                                            "--wait-for-room-interval-endpoint", "/api/NoSuchPoll?callid="], environment: home.environment)
        #expect(add.status == 0, "\(add.stderr)")
        let result = try await ECVProcess.run(["call", "--env", "legacy", "--json"], environment: home.environment, timeout: .seconds(15))
        #expect(result.status == 1, "\(result.stderr)")
        let events = result.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let error = try #require(events.first { $0["event"] as? String == "Error" }, "\(result.stdout)")
        #expect((error["detail"] as? String)?.contains(base + "/api/NoSuchPoll?callid=") == true, "\(error)")
        let dialed = try #require(events.first { $0["event"] as? String == "DialSuccess" }?["t"] as? Double)
        let failed = try #require(error["t"] as? Double)
        #expect(failed - dialed < 3, "three polls 100 ms apart, not 3 s apart: \(failed - dialed) s")
        await service.stop()
    }

    /// Runs `ecv call --env environment --json` until it printed `count` QueueInfoUpdated events,
    /// then interrupts it (a clean hangup).
    private func queueInfoUpdates(environment: String, home: PrivateConfigHome, count: Int)
        async throws -> [(time: Double, position: Int?)] {
        let caller = try RunningECV(["call", "--env", environment, "--json"], environment: home.environment)
        defer { caller.stop() }
        @Sendable func updates() -> [(time: Double, position: Int?)] {
            // Only whole lines: the last one may still be arriving.
            caller.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().compactMap { line in
                guard let event = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      event["event"] as? String == "QueueInfoUpdated", let time = event["t"] as? Double else { return nil }
                return (time, (event["queue"] as? [String: Any])?["position"] as? Int)
            }
        }
        // Five polls at the SDK's default 3 s would take twelve seconds.
        do {
            try await eventually(.seconds(8), "\(count) queue-info polls") { updates().count >= count }
        } catch {
            Issue.record("ecv call printed:\n\(caller.stdout)\n\(caller.stderr)")
            throw error
        }
        kill(caller.pid, SIGINT)
        _ = try await caller.exitStatus(within: .seconds(15))
        return Array(updates().prefix(count))
    }
}

/// The Danamon guide's `EnvironmentCallAttribute` as JSON, and how a declaration resolves a
/// caller's choices.
struct EnvironmentCallAttributeTests {
    @Test func decodingFillsTheGuidesDefaults() throws {
        let attribute = try JSONDecoder().decode(EnvironmentCallAttribute.self,
                                                 from: Data(#"{"key": "video_flow", "displayName": "Video Flow", "values": ["ETB", "NTB"]}"#.utf8))
        #expect(attribute == EnvironmentCallAttribute(key: "video_flow", displayName: "Video Flow", values: ["ETB", "NTB"]))
        #expect(attribute.type == .select && attribute.defaultValue == nil)
        let text = try JSONDecoder().decode(EnvironmentCallAttribute.self,
                                            from: Data(#"{"key": "NikNumber", "label": "Nik", "type": "text"}"#.utf8))
        #expect(text.type == .text && text.values.isEmpty && text.displayName == "Nik", "label is read as displayName")
    }

    @Test func decodingRejectsAnUnknownTypeAndASelectWithoutValues() throws {
        for (json, field, reason) in [
            (#"{"key": "k", "displayName": "K", "type": "dropdown", "values": ["a"]}"#, "type", #"unknown value "dropdown""#),
            (#"{"key": "k", "displayName": "K"}"#, "values", "no values to choose from"),
            (#"{"key": "", "displayName": "K", "type": "text"}"#, "key", "must not be empty"),
            (#"{"key": "k"}"#, "displayName", ""),
        ] {
            #expect {
                _ = try JSONDecoder().decode(EnvironmentCallAttribute.self, from: Data(json.utf8))
            } throws: { error in
                guard let error = error as? DecodingError else { return false }
                switch error {
                case .dataCorrupted(let context): return context.codingPath.last?.stringValue == field && context.debugDescription.contains(reason)
                case .keyNotFound(let key, _): return key.stringValue == field
                default: return false
                }
            }
        }
    }

    @Test func encodingWritesTheSeedsNames() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let text = String(decoding: try encoder.encode(EnvironmentCallAttribute(key: "NikNumber", displayName: "Nik", defaultValue: "1",
                                                                                 type: "text")), as: UTF8.self)
        #expect(text == #"{"defaultValue":"1","displayName":"Nik","key":"NikNumber","type":"text"}"#)
    }

    @Test func dialAttributesPreselectTheFirstValueAndCheckChoices() throws {
        let declared = [
            EnvironmentCallAttribute(key: "video_flow", displayName: "Video Flow", values: ["ETB", "NTB"]),
            EnvironmentCallAttribute(key: "NikNumber", displayName: "Nik Number (encrypted)", defaultValue: "…", type: "text"),
            EnvironmentCallAttribute(key: "note", displayName: "Note", type: .text),
        ]
        #expect(try declared.dialAttributes(choosing: [:]) == ["video_flow": "ETB", "NikNumber": "…"])
        #expect(try declared.dialAttributes(choosing: ["video_flow": "NTB", "NikNumber": "42", "extra": "x"])
                == ["video_flow": "NTB", "NikNumber": "42", "extra": "x"])
        #expect(throws: EnvironmentCallAttributeError.valueNotOffered(key: "video_flow", displayName: "Video Flow", value: "XYZ",
                                                                      offered: ["ETB", "NTB"])) {
            try declared.dialAttributes(choosing: ["video_flow": "XYZ"])
        }
        #expect(throws: EnvironmentCallAttributeError.duplicateKey("video_flow")) {
            try (declared + [EnvironmentCallAttribute(key: "video_flow", displayName: "Again", values: ["ETB"])]).dialAttributes(choosing: [:])
        }
        #expect(throws: EnvironmentCallAttributeError.selectWithoutValues(key: "empty")) {
            try EnvironmentCallAttribute(key: "empty", displayName: "Empty").resolvedValue(choosing: nil)
        }
    }
}
