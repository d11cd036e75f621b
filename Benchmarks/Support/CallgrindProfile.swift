import Foundation

/// What one `valgrind --tool=callgrind` run counted, read from its output file: the total
/// instructions (`Ir`, all threads), and per function its own and its inclusive instructions.
///
/// Counted instructions do not depend on the machine's load, which is why the overhead comparison
/// uses them beside the timings. The format is callgrind's ("Callgrind Format Specification" in
/// the valgrind manual): `ob=`/`fn=` name the current object and function (names are compressed
/// as `(id) name` on first use, `(id)` after), a line of numbers is a cost of the current function
/// (position then events), and a `calls=` line makes the next cost line the inclusive cost of a
/// call from it. Inclusive = own + calls, as `callgrind_annotate --inclusive=yes` adds it
/// (recursion counts more than once there too).
package struct CallgrindProfile: Sendable {
    package struct Function: Sendable, Hashable {
        package var name: String
        /// The shared object or program, as its file name (`libgstreamer-1.0.so.0.2200.0`).
        package var object: String
    }

    package struct Cost: Sendable {
        package var own: UInt64 = 0
        package var inclusive: UInt64 = 0
        package init() {}
    }

    package var total: UInt64
    package var functions: [Function: Cost]

    package init(path: String) throws {
        // The reason a file cannot be read (missing, not UTF-8) is the run's failure, named below.
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw BenchmarkError.failed("cannot read the callgrind output \(path)")
        }
        var objects: [String: String] = [:]
        var names: [String: String] = [:]
        var object = "???"
        var current: Function?
        var nextIsCall = false
        var functions: [Function: Cost] = [:]
        var total: UInt64?

        /// `(id) name` defines, `(id)` refers, `name` is uncompressed.
        func resolve(_ value: Substring, in table: inout [String: String]) -> String {
            guard value.hasPrefix("("), let close = value.firstIndex(of: ")") else { return String(value) }
            let id = String(value[value.index(after: value.startIndex)..<close])
            let rest = value[value.index(after: close)...].trimmingCharacters(in: .whitespaces)
            if !rest.isEmpty { table[id] = rest }
            return table[id] ?? "(\(id))"
        }

        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            guard let first = line.first else { continue }
            if first.isNumber || first == "+" || first == "-" || first == "*" {
                guard let function = current, let cost = line.split(separator: " ").last.flatMap({ UInt64($0) }) else { continue }
                if nextIsCall {
                    functions[function, default: Cost()].inclusive += cost
                    nextIsCall = false
                } else {
                    functions[function, default: Cost()].own += cost
                    functions[function, default: Cost()].inclusive += cost
                }
            } else if line.hasPrefix("ob=") {
                object = resolve(line.dropFirst(3), in: &objects)
            } else if line.hasPrefix("cob=") {
                _ = resolve(line.dropFirst(4), in: &objects)
            } else if line.hasPrefix("fn=") {
                current = Function(name: resolve(line.dropFirst(3), in: &names), object: (object as NSString).lastPathComponent)
            } else if line.hasPrefix("cfn=") {
                _ = resolve(line.dropFirst(4), in: &names)
            } else if line.hasPrefix("calls=") {
                nextIsCall = true
            } else if line.hasPrefix("totals:") || line.hasPrefix("summary:") {
                total = line.split(separator: " ").last.flatMap { UInt64($0) }
            }
        }
        guard let total else { throw BenchmarkError.failed("\(path) has no totals line: not a finished callgrind run") }
        self.total = total
        self.functions = functions
    }

    /// Own instructions per object (program or library).
    package var ownByObject: [String: UInt64] {
        functions.reduce(into: [:]) { sums, entry in sums[entry.key.object, default: 0] += entry.value.own }
    }
}
