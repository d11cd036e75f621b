// MARK: Framework overhead in instructions

/// `bench-encode instructions`: the framework-overhead comparison counted in instructions
/// (callgrind), which unlike CPU time does not move with the machine's load.
package struct InstructionsSection: Codable, Sendable {
    package var method: String
    package var width: Int
    package var height: Int
    package var kbps: Int
    /// The two frame counts each side runs; per frame = (long − short) ÷ (their difference).
    package var shortFrames: Int
    package var longFrames: Int
    package var figures: [InstructionFigure]
    package var load: LoadWindow?

    package init(method: String, width: Int, height: Int, kbps: Int, shortFrames: Int, longFrames: Int,
                figures: [InstructionFigure], load: LoadWindow?) {
        self.method = method
        self.width = width
        self.height = height
        self.kbps = kbps
        self.shortFrames = shortFrames
        self.longFrames = longFrames
        self.figures = figures
        self.load = load
    }
}

/// Total instructions of a short and a long run of one side, and what a frame costs.
package struct InstructionCounts: Codable, Sendable {
    package var short: UInt64
    package var long: UInt64
    package var perFrame: Double

    package init(short: UInt64, long: UInt64, frames: Int) {
        self.short = short
        self.long = long
        perFrame = (Double(long) - Double(short)) / Double(frames)
    }
}

/// Per frame, instructions spent in one object's own code on each side.
package struct ObjectShare: Codable, Sendable {
    package var object: String
    package var ours: Double
    package var gstLaunch: Double

    package init(object: String, ours: Double, gstLaunch: Double) {
        self.object = object
        self.ours = ours
        self.gstLaunch = gstLaunch
    }
}

/// Per frame, a Swift function's inclusive and own instructions in our run.
package struct FunctionShare: Codable, Sendable {
    package var function: String
    package var object: String
    package var inclusive: Double
    package var own: Double

    package init(function: String, object: String, inclusive: Double, own: Double) {
        self.function = function
        self.object = object
        self.inclusive = inclusive
        self.own = own
    }
}

package struct InstructionFigure: Codable, Sendable {
    package var codec: String
    package var encoder: String
    package var launchLine: String
    package var ours: InstructionCounts
    package var gstLaunch: InstructionCounts
    /// ours per frame ÷ gst-launch per frame.
    package var ratio: Double
    /// Objects whose own per-frame instructions differ most between the sides, largest first.
    package var objects: [ObjectShare]
    /// The Swift code (our program, the Swift runtime, Foundation, libdispatch) that costs most per
    /// frame in our run, by inclusive instructions.
    package var swiftFunctions: [FunctionShare]

    package init(codec: String, encoder: String, launchLine: String, ours: InstructionCounts, gstLaunch: InstructionCounts,
                objects: [ObjectShare], swiftFunctions: [FunctionShare]) {
        self.codec = codec
        self.encoder = encoder
        self.launchLine = launchLine
        self.ours = ours
        self.gstLaunch = gstLaunch
        ratio = gstLaunch.perFrame > 0 ? ours.perFrame / gstLaunch.perFrame : .nan
        self.objects = objects
        self.swiftFunctions = swiftFunctions
    }
}

extension MarkdownReport {
    static func instructionsTable(_ section: InstructionsSection) -> [String] {
        let frames = section.longFrames - section.shortFrames
        var lines = ["## Framework overhead in instructions (callgrind, ECVKit vs gst-launch-1.0, same graph)", "", section.method, "",
                     "| codec | encoder | size | kbit/s | ours Ir \(section.shortFrames) / \(section.longFrames) frames | "
                        + "gst-launch Ir \(section.shortFrames) / \(section.longFrames) frames | ours Ir/frame | gst-launch Ir/frame | ratio |",
                     "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for figure in section.figures {
            lines.append("| \(figure.codec) | \(figure.encoder) | \(section.width)×\(section.height) | \(section.kbps) | "
                + "\(count(figure.ours.short)) / \(count(figure.ours.long)) | \(count(figure.gstLaunch.short)) / \(count(figure.gstLaunch.long)) | "
                + "\(count(figure.ours.perFrame)) | \(count(figure.gstLaunch.perFrame)) | \(number(figure.ratio, 4)) |")
        }
        lines += ["", "Per frame = (Ir of the \(section.longFrames)-frame run − Ir of the \(section.shortFrames)-frame run) ÷ \(frames).", ""]
        for figure in section.figures {
            lines += ["### \(figure.encoder): where the per-frame instructions differ", "",
                      "| object (own instructions) | ours Ir/frame | gst-launch Ir/frame | ours − gst-launch |",
                      "| --- | ---: | ---: | ---: |"]
            for share in figure.objects {
                lines.append("| \(share.object) | \(count(share.ours)) | \(count(share.gstLaunch)) | \(count(share.ours - share.gstLaunch)) |")
            }
            if !figure.swiftFunctions.isEmpty {
                lines += ["", "| Swift function (ours) | object | inclusive Ir/frame | own Ir/frame |", "| --- | --- | ---: | ---: |"]
                for function in figure.swiftFunctions {
                    lines.append("| `\(function.function)` | \(function.object) | \(count(function.inclusive)) | \(count(function.own)) |")
                }
            }
            lines += ["", "`gst-launch-1.0 \(figure.launchLine)`", ""]
        }
        return lines + [load(section.load), ""]
    }

    /// Instruction counts with thousands separators; per-frame values to one instruction.
    static func count(_ value: Double) -> String {
        guard value.isFinite else { return "–" }
        let rounded = Int64(value.rounded())
        let digits = String(rounded.magnitude)
        var grouped = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { grouped.append(",") }
            grouped.append(digit)
        }
        return (rounded < 0 ? "−" : "") + grouped
    }

    static func count(_ value: UInt64) -> String { count(Double(value)) }
}
