import Foundation

/// docs/protocol.md, read from the source tree: the examples tested are the ones people read.
enum ProtocolDocument {
    struct Example: Sendable, CustomStringConvertible {
        var typeName: String
        var json: String
        var line: Int
        var description: String { "\(typeName) at docs/protocol.md:\(line)" }
    }

    struct TableRow: Sendable, CustomStringConvertible {
        var received: String
        var parsed: String
        var canonical: String
        var line: Int
        var description: String { "\(received.debugDescription) at docs/protocol.md:\(line)" }
    }

    struct Contents: Sendable {
        var examples: [Example] = []
        var untaggedJSONBlockLines: [Int] = []
        var dataChannelRows: [TableRow] = []
        /// The rows of the verification-command table (§4.1).
        var verificationRows: [TableRow] = []
        var malformedTableLines: [Int] = []
    }

    static let url: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/protocol.md")

    static func load() throws -> Contents {
        parse(try String(contentsOf: url, encoding: .utf8))
    }

    /// `load()` for test arguments, which cannot throw; a missing document shows up as the
    /// `documentIsReadable` test failing.
    static var contentsOrEmpty: Contents { (try? load()) ?? Contents() }

    static func parse(_ text: String) -> Contents {
        var contents = Contents()
        let lines = text.components(separatedBy: "\n")
        var pendingTag: String?
        var index = 0
        while index < lines.count {
            let line = lines[index].trimmingCharacters(in: .whitespaces)
            if let tag = marker(in: line, prefix: "<!-- example:") {
                pendingTag = tag
            } else if line == "```json" {
                let start = index + 1
                var body: [String] = []
                index += 1
                while index < lines.count, lines[index].trimmingCharacters(in: .whitespaces) != "```" {
                    body.append(lines[index])
                    index += 1
                }
                if let tag = pendingTag {
                    contents.examples.append(Example(typeName: tag, json: body.joined(separator: "\n"), line: start))
                } else {
                    contents.untaggedJSONBlockLines.append(start)
                }
                pendingTag = nil
            } else if let table = marker(in: line, prefix: "<!-- table:"), table == "data-channel" || table == "verification-commands" {
                index += 1
                var rowIndex = 0
                while index < lines.count, lines[index].hasPrefix("|") {
                    defer { rowIndex += 1 }
                    // Row 0 is the header, row 1 the separator.
                    if rowIndex >= 2 {
                        if let row = tableRow(lines[index], line: index + 1) {
                            if table == "data-channel" { contents.dataChannelRows.append(row) } else { contents.verificationRows.append(row) }
                        } else {
                            contents.malformedTableLines.append(index + 1)
                        }
                    }
                    index += 1
                }
                continue
            } else if !line.isEmpty {
                pendingTag = nil
            }
            index += 1
        }
        return contents
    }

    private static func marker(in line: String, prefix: String) -> String? {
        guard line.hasPrefix(prefix), line.hasSuffix("-->") else { return nil }
        return String(line.dropFirst(prefix.count).dropLast(3)).trimmingCharacters(in: .whitespaces)
    }

    /// Splits `| a | b | c |` where `\|` is a literal pipe, and strips the code-span backticks.
    private static func tableRow(_ line: String, line number: Int) -> TableRow? {
        let placeholder = "\u{1}"
        let cells = line.replacingOccurrences(of: "\\|", with: placeholder)
            .split(separator: "|", omittingEmptySubsequences: false)
            .dropFirst().dropLast()
            .map { cell -> String in
                var text = cell.trimmingCharacters(in: .whitespaces)
                if text.hasPrefix("`"), text.hasSuffix("`"), text.count >= 2 { text = String(text.dropFirst().dropLast()) }
                return text.replacingOccurrences(of: placeholder, with: "|")
            }
        guard cells.count == 3 else { return nil }
        return TableRow(received: cells[0], parsed: cells[1], canonical: cells[2], line: number)
    }
}
