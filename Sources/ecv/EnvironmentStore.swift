import ECVProtocol
import Foundation

/// Environments persisted under the user's config directory
/// (`$XDG_CONFIG_HOME/ecvkit/environments.json`, else `~/.config/ecvkit/environments.json`).
///
/// Without the file there is the built-in Danamon example. A file that exists but cannot be read,
/// is too big, is not JSON or is not a valid environments file is an error naming the file and
/// the line, never replaced by the default: the next `ecv env add` would save the default over a
/// file with one typo in it.
struct EnvironmentStore {
    struct Contents: Codable, Equatable {
        var current: String?
        var environments: [Environment]

        init(current: String?, environments: [Environment]) {
            self.current = current
            self.environments = environments
        }

        private enum CodingKeys: String, CodingKey {
            case current, environments
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            current = try container.decodeIfPresent(String.self, forKey: .current)
            environments = try container.decode([Environment].self, forKey: .environments)
            var names: Set<String> = []
            for (index, environment) in environments.enumerated() where !names.insert(environment.name).inserted {
                let path = container.codingPath + [CodingKeys.environments as any CodingKey, IndexKey(index), Environment.CodingKeys.name]
                throw DecodingError.dataCorrupted(.init(codingPath: path,
                                                        debugDescription: "a second environment named '\(environment.name)'"))
            }
        }
    }

    /// Far more than any hand-kept list of environments; a bigger file is refused unread.
    static let maxFileBytes = 1 << 20

    /// What there is without a file.
    static let builtIn = Contents(current: nil, environments: [Environment.danamonExample])

    let url: URL

    init() {
        let base = ProcessInfo.processInfo.environment["XDG_CONFIG_HOME"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".config")
        url = base.appendingPathComponent("ecvkit/environments.json")
    }

    func load() throws(CLIError) -> Contents {
        guard let data = try readFile() else { return Self.builtIn }
        do {
            return try ECVJSON.decode(Contents.self, from: data)
        } catch {
            throw .failed(message(for: error, in: data))
        }
    }

    func save(_ contents: Contents) throws(CLIError) {
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            try encoder.encode(contents).write(to: url, options: .atomic)
        } catch {
            throw .failed("cannot save \(url.path): \(error.localizedDescription)")
        }
    }

    func environment(named name: String?) throws(CLIError) -> Environment? {
        let contents = try load()
        guard let name = name ?? contents.current else { return nil }
        guard let environment = contents.environments.first(where: { $0.name == name }) else {
            throw .usage("no environment '\(name)'; `ecv env list` shows them")
        }
        return environment
    }

    /// The file's bytes, or nil when there is no file.
    private func readFile() throws(CLIError) -> Data? {
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: url)
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile || error.code == .fileNoSuchFile {
            return nil
        } catch {
            throw .failed("cannot read \(url.path): \(Self.reason(error))")
        }
        // Closing a file only read from: nothing is lost if it fails.
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: Self.maxFileBytes + 1) ?? Data()
        } catch {
            throw .failed("cannot read \(url.path): \(Self.reason(error))")
        }
        guard data.count <= Self.maxFileBytes else {
            throw .failed("\(url.path) is larger than \(Self.maxFileBytes >> 20) MiB; an environments file is a few KiB")
        }
        return data
    }

    /// The system's words for a file error ("Is a directory", "Permission denied"): Foundation's
    /// own description on Linux is often just an error number.
    private static func reason(_ error: any Error) -> String {
        guard let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError,
              underlying.domain == NSPOSIXErrorDomain else { return error.localizedDescription }
        return String(cString: strerror(Int32(underlying.code)))
    }

    /// The file, the place in it, and what is wrong there.
    private func message(for error: ProtocolError, in data: Data) -> String {
        guard let field = error.field else {
            if let syntax = JSONTextLocator.syntaxError(in: data) {
                return "\(url.path): \(syntax.position): \(syntax.reason) (the file is not valid JSON)"
            }
            return "\(url.path): \(error)"
        }
        let place = JSONTextLocator.position(ofPath: field, in: data).map { "\($0): " } ?? ""
        return "\(url.path): \(place)\(error)"
    }
}
