// libFuzzer target: the command-line parser (Sources/ecv/Arguments.swift) on arbitrary words (the
// input split at NUL bytes), with a fixed option spec. Whatever the words: no crash; a parse that
// succeeds saw no unknown option before `--`; words that do not start with "-" (and every word
// after `--`) come out as positional words, in order; an option's suggestion is a known option
// at most two edits or a prefix away; edit distance is symmetric and at most the longer length.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzArguments(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let spec = OptionSpec(values: ["service-url", "name", "record", "bitrate", "queue"], flags: ["json", "stats", "verbose", "quiet"],
                          short: ["v": "verbose", "q": "quiet"])
    let words = Array(UnsafeBufferPointer(start: data, count: size)).split(separator: 0, omittingEmptySubsequences: false)
        .map { String(decoding: $0, as: UTF8.self) }
    let end = words.firstIndex(of: "--") ?? words.count
    let expectedPositional = words[..<end].filter { $0 == "-" || !$0.hasPrefix("-") } + words.dropFirst(end + 1)
    do {
        var arguments = try Arguments(words, spec)
        for word in words[..<end] where word.hasPrefix("--") && word != "--" {
            let name = String(word.dropFirst(2).split(separator: "=", maxSplits: 1).first ?? "")
            if !spec.all.contains(name) { fatalError("unknown option \(word) accepted") }
        }
        // Words an option took as its value are not positional: those are a subsequence.
        var remaining = expectedPositional[...]
        for word in arguments.positional {
            guard let index = remaining.firstIndex(of: word) else { fatalError("positional \(word) out of order or invented") }
            remaining = remaining[remaining.index(after: index)...]
        }
        _ = arguments.values("queue")
        _ = try? arguments.int("bitrate") // a malformed number is the parser's own error, not a property
    } catch {
        if error.description.isEmpty { fatalError("an error without a message") }
    }
    for word in words.prefix(4) {
        if let suggestion = spec.suggestion(for: word) {
            let distance = OptionSpec.editDistance(suggestion, word)
            if !spec.all.contains(suggestion) { fatalError("suggested an unknown option \(suggestion)") }
            if !suggestion.hasPrefix(word) && distance > max(2, word.count / 3) { fatalError("suggested \(suggestion) for \(word)") }
        }
        if let other = words.last {
            let forth = OptionSpec.editDistance(word, other), back = OptionSpec.editDistance(other, word)
            if forth != back || forth > max(word.count, other.count) { fatalError("edit distance \(forth)/\(back) for \(word), \(other)") }
        }
    }
    return 0
}
