import Foundation

/// Undoes GStreamer 1.22's quoting of Matroska tag values.
///
/// matroskamux 1.22 writes every `SimpleTag` value through `gst_value_serialize`, so a track
/// titled `caller video` gets the tag string `"caller\ video"` (the track's own name is right).
/// ffmpeg and PyAV let the tag win, so a reviewer sees the quoted form. The muxer writes its Tags
/// at the end of a finalised file; this rewrites each quoted title found there to the plain text,
/// padded with zero bytes to the same length, which EBML allows for string elements.
enum MatroskaTagRepair {
    /// How far from the end of the file the muxer's Tags element can be.
    static let searchWindow = 256 * 1024

    /// Rewrites the quoted forms of `titles` near the end of the file; returns how many. A file
    /// that cannot be opened, read or written back throws `cannotWrite` (its titles stay quoted).
    @discardableResult
    static func unquoteTitles(_ titles: [String], inFileAt path: String) throws(RecordingError) -> Int {
        let replacements = titles.compactMap { title -> (quoted: [UInt8], plain: [UInt8])? in
            let quoted = Array(serialized(title).utf8)
            let plain = Array(title.utf8)
            return quoted == plain ? nil : (quoted, plain + [UInt8](repeating: 0, count: quoted.count - plain.count))
        }
        guard !replacements.isEmpty else { return 0 }
        do {
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
            // FileHandle writes straight through write(2): by the close, every byte is the kernel's.
            defer { try? handle.close() }
            let size = try handle.seekToEnd()
            let start = size > UInt64(searchWindow) ? size - UInt64(searchWindow) : 0
            try handle.seek(toOffset: start)
            var bytes = [UInt8](try handle.readToEnd() ?? Data())
            var count = 0
            for replacement in replacements {
                var index = 0
                while let found = firstRange(of: replacement.quoted, in: bytes, from: index) {
                    bytes.replaceSubrange(found, with: replacement.plain)
                    index = found.upperBound
                    count += 1
                }
            }
            guard count > 0 else { return 0 }
            try handle.seek(toOffset: start)
            try handle.write(contentsOf: Data(bytes))
            return count
        } catch {
            throw .cannotWrite(path: path, reason: "the track titles stay quoted: \(error.localizedDescription)")
        }
    }

    /// What `gst_value_serialize` makes of a string: unchanged when every byte is one of
    /// `[A-Za-z0-9_+-/:.]`, else quoted with other printable ASCII backslash-escaped and
    /// control or non-ASCII bytes as three octal digits.
    static func serialized(_ text: String) -> String {
        let plain = text.utf8.allSatisfy(isPlain)
        guard !plain, !text.isEmpty else { return text.isEmpty ? "\"\"" : text }
        var result = "\""
        for byte in text.utf8 {
            if isPlain(byte) {
                result.append(Character(Unicode.Scalar(byte)))
            } else if byte < 0x20 || byte >= 0x7f {
                result += "\\" + String(byte >> 6) + String((byte >> 3) & 7) + String(byte & 7)
            } else {
                result += "\\" + String(Character(Unicode.Scalar(byte)))
            }
        }
        return result + "\""
    }

    private static func isPlain(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: "."):
            true
        default:
            false
        }
    }

    private static func firstRange(of needle: [UInt8], in haystack: [UInt8], from start: Int) -> Range<Int>? {
        guard !needle.isEmpty, haystack.count >= needle.count, start <= haystack.count - needle.count else { return nil }
        var index = start
        while index <= haystack.count - needle.count {
            if haystack[index] == needle[0], haystack[index..<index + needle.count].elementsEqual(needle) {
                return index..<index + needle.count
            }
            index += 1
        }
        return nil
    }
}
