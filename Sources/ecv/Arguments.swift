import Foundation

/// The options one command accepts: those that take a value, those that do not, and one-letter
/// spellings of flags (`-v` for `verbose`). Declared up front, so an unknown option is refused at
/// once instead of being mistaken for an option taking the next word as its value.
struct OptionSpec: Sendable {
    var values: Set<String> = []
    var flags: Set<String> = []
    var short: [Character: String] = [:]

    static func + (lhs: OptionSpec, rhs: OptionSpec) -> OptionSpec {
        OptionSpec(values: lhs.values.union(rhs.values), flags: lhs.flags.union(rhs.flags),
                   short: lhs.short.merging(rhs.short) { first, _ in first })
    }

    /// Every long option, for completion and suggestions.
    var all: Set<String> { values.union(flags) }

    /// The known option closest to a mistyped one: a prefix of exactly one, else at most two
    /// edits away (a third of the name for long ones), the nearest first.
    func suggestion(for typed: String) -> String? {
        let prefixed = all.filter { $0.hasPrefix(typed) }
        if prefixed.count == 1 { return prefixed.first }
        let allowed = max(2, typed.count / 3)
        return all.map { ($0, Self.editDistance($0, typed)) }.filter { $0.1 <= allowed }
            .min { $0.1 != $1.1 ? $0.1 < $1.1 : $0.0 < $1.0 }?.0
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}

/// A strict command-line parser: `--name value`, `--name=value`, repeated options, flags,
/// one-letter flags (`-v`, `-vv`, `-q`), `--` ending the options, and positional words.
///
/// An option the command does not know is an error at once, with a suggestion, and never takes
/// the next word as its value; an option that takes a value never takes a word starting with
/// `--` (write `--name=--value` for that). Errors name the option as typed.
struct Arguments {
    private(set) var positional: [String] = []
    private var values: [String: [String]] = [:]
    private var flags: [String: Int] = [:]
    private var consumed: Set<String> = []
    /// Options read as single values; given twice, they are a contradiction.
    private var single: Set<String> = []

    init(_ words: [String], _ spec: OptionSpec) throws(CLIError) {
        var index = 0
        var optionsEnded = false
        while index < words.count {
            let word = words[index]
            index += 1
            if optionsEnded || word == "-" || !word.hasPrefix("-") {
                positional.append(word)
            } else if word == "--" {
                optionsEnded = true
            } else if word.hasPrefix("--") {
                let body = String(word.dropFirst(2))
                let name = body.split(separator: "=", maxSplits: 1).first.map(String.init) ?? body
                if spec.flags.contains(name) {
                    guard name == body else { throw .usage("--\(name) takes no value") }
                    flags[name, default: 0] += 1
                } else if spec.values.contains(name) {
                    if name != body {
                        values[name, default: []].append(String(body.dropFirst(name.count + 1)))
                    } else {
                        guard index < words.count, !words[index].hasPrefix("--") else {
                            throw .usage("--\(name) needs a value" + (index < words.count ? ", not the option \(words[index])" : ""))
                        }
                        values[name, default: []].append(words[index])
                        index += 1
                    }
                } else {
                    throw .usage("unknown option --\(name)" + (spec.suggestion(for: name).map { " (did you mean --\($0)?)" } ?? ""))
                }
            } else {
                for letter in word.dropFirst() {
                    guard let name = spec.short[letter] else {
                        let known = spec.short.keys.sorted().map { "-\($0)" }.joined(separator: ", ")
                        throw .usage("unknown option \(word)" + (known.isEmpty ? "" : " (this command's short options: \(known))"))
                    }
                    flags[name, default: 0] += 1
                }
            }
        }
    }

    mutating func flag(_ name: String) -> Bool {
        consumed.insert(name)
        return flags[name] != nil
    }

    /// How many times a flag was given (`-vv` is two).
    mutating func count(_ name: String) -> Int {
        consumed.insert(name)
        return flags[name] ?? 0
    }

    /// The option's value; giving a single-valued option twice is an error at `finish()`.
    mutating func value(_ name: String) -> String? {
        consumed.insert(name)
        single.insert(name)
        return values[name]?.last
    }

    /// Every value of a repeatable option, in order.
    mutating func values(_ name: String) -> [String] {
        consumed.insert(name)
        return values[name] ?? []
    }

    /// A file or directory option made absolute against the current directory, so GLib and
    /// GStreamer (and the messages) see the path the user meant.
    mutating func path(_ name: String) -> String? {
        value(name).map(Self.absolute)
    }

    static func absolute(_ path: String) -> String {
        let expanded = (path as NSString).expandingTildeInPath
        return URL(fileURLWithPath: expanded).standardizedFileURL.path
    }

    mutating func int(_ name: String) throws(CLIError) -> Int? {
        guard let text = value(name) else { return nil }
        guard let number = Int(text) else { throw .usage("--\(name) takes a whole number, not '\(text)'") }
        return number
    }

    mutating func double(_ name: String) throws(CLIError) -> Double? {
        guard let text = value(name) else { return nil }
        guard let number = Double(text), number.isFinite else { throw .usage("--\(name) takes a number, not '\(text)'") }
        return number
    }

    /// A number that must be positive (a duration, a count).
    mutating func positive(_ name: String) throws(CLIError) -> Double? {
        guard let number = try double(name) else { return nil }
        guard number > 0 else { throw .usage("--\(name) takes a number above 0, not '\(value(name) ?? "")'") }
        return number
    }

    /// Fails when an option was given that the command never read, or a single-valued one twice.
    func finish() throws(CLIError) {
        let given = Set(values.keys).union(flags.keys)
        if let first = given.subtracting(consumed).sorted().first { throw .usage("--\(first) does not apply here") }
        for name in single.sorted() {
            if let given = values[name], given.count > 1, let first = given.first, let last = given.last {
                throw .usage("--\(name) given \(given.count) times ('\(first)' … '\(last)'); give it once")
            }
        }
    }

    /// Fails when two options that exclude each other were both given.
    mutating func exclusive(_ first: String, _ second: String, because reason: String = "") throws(CLIError) {
        let a = flags[first] != nil || values[first] != nil, b = flags[second] != nil || values[second] != nil
        if a && b { throw .usage("--\(first) and --\(second) exclude each other" + (reason.isEmpty ? "" : ": \(reason)")) }
    }
}

/// A failure the CLI reports and exits non-zero for.
enum CLIError: Error, CustomStringConvertible {
    /// Bad usage: exit 2.
    case usage(String)
    /// The job failed: exit 1.
    case failed(String)

    var description: String {
        switch self {
        case .usage(let message): message
        case .failed(let message): message
        }
    }
}
