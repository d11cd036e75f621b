/// A small command-line parser: `--name value`, `--name=value`, repeated options, flags and
/// positional words. Every unknown option is an error naming it.
struct Arguments {
    private(set) var positional: [String] = []
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []
    private var consumed: Set<String> = []

    /// Options that take no value.
    init(_ words: [String], flags knownFlags: Set<String>) throws(CLIError) {
        var index = 0
        while index < words.count {
            let word = words[index]
            if word.hasPrefix("--") {
                let body = String(word.dropFirst(2))
                if let equals = body.firstIndex(of: "=") {
                    values[String(body[..<equals]), default: []].append(String(body[body.index(after: equals)...]))
                } else if knownFlags.contains(body) {
                    flags.insert(body)
                } else {
                    guard index + 1 < words.count else { throw .usage("option --\(body) needs a value") }
                    values[body, default: []].append(words[index + 1])
                    index += 1
                }
            } else {
                positional.append(word)
            }
            index += 1
        }
    }

    mutating func flag(_ name: String) -> Bool {
        consumed.insert(name)
        return flags.contains(name)
    }

    mutating func value(_ name: String) -> String? {
        consumed.insert(name)
        return values[name]?.last
    }

    mutating func values(_ name: String) -> [String] {
        consumed.insert(name)
        return values[name] ?? []
    }

    mutating func int(_ name: String) throws(CLIError) -> Int? {
        guard let text = value(name) else { return nil }
        guard let number = Int(text) else { throw .usage("--\(name) takes a whole number, not '\(text)'") }
        return number
    }

    mutating func double(_ name: String) throws(CLIError) -> Double? {
        guard let text = value(name) else { return nil }
        guard let number = Double(text) else { throw .usage("--\(name) takes a number, not '\(text)'") }
        return number
    }

    /// Fails naming every option that no command read.
    func finish() throws(CLIError) {
        let unknown = Set(values.keys).union(flags).subtracting(consumed)
        if let first = unknown.sorted().first { throw .usage("unknown option --\(first)") }
    }
}

/// A failure the CLI reports and exits non-zero for.
enum CLIError: Error, CustomStringConvertible {
    case usage(String)
    case failed(String)

    var description: String {
        switch self {
        case .usage(let message): message
        case .failed(let message): message
        }
    }
}
