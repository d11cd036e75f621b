import Foundation

func printErr(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// Writes a line to standard output at once (no stdio buffering between us and a reading script).
func say(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

/// One JSON object per line, for scripts (`--json`).
enum NDJSON {
    static func line(_ fields: [String: any Sendable]) -> String {
        guard JSONSerialization.isValidJSONObject(fields.mapValues { $0 as Any }),
              let data = try? JSONSerialization.data(withJSONObject: fields.mapValues { $0 as Any }, options: [.sortedKeys]) else {
            return "{\"error\":\"unencodable event\"}"
        }
        return String(decoding: data, as: UTF8.self)
    }

    static func emit(_ fields: [String: any Sendable]) { say(line(fields)) }
}
