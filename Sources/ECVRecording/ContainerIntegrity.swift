import Foundation

/// Whether a recorded file was finalised, read from its container structure (element and box
/// headers only, never the media): a recorder killed mid-call leaves Matroska without its index
/// (Cues), duration and segment size, with its last cluster open; fragmented MP4 without its
/// fragment index (`mfra`), possibly with a last box cut short.
public struct ContainerIntegrity: Sendable, Hashable, Codable {
    /// "matroska" (also WebM) or "mp4"; "none" for an empty file, "unknown" for anything else.
    public var container: String
    /// Clusters (Matroska) or fragments (MP4) found.
    public var clusters: Int
    /// What a finalised file would have and this one lacks, in words; empty when complete.
    public var missing: [String]

    public var isFinalised: Bool { missing.isEmpty }
}

enum ContainerScanner {
    /// Headers read at most; a malformed file cannot keep the scan going.
    static let maxElements = 2_000_000

    /// A file's container as its first bytes tell it.
    enum Kind {
        /// Matroska's EBML header (WebM is Matroska with another DocType).
        case matroska
        /// An ISO BMFF box first (`ftyp`, `moov`, `moof`, `styp`, `free`, `mdat`).
        case mp4
        /// Nothing written.
        case empty
    }

    /// The container by content, whatever the file's name says; nil for a file that cannot be
    /// opened or is neither.
    static func kind(of url: URL) -> Kind? {
        ByteReader(url: url).flatMap(kind)
    }

    private static func kind(of file: ByteReader) -> Kind? {
        if file.size == 0 { return .empty }
        if let magic = file.read(at: 0, count: 4), magic == [0x1A, 0x45, 0xDF, 0xA3] { return .matroska }
        if let type = file.read(at: 4, count: 4),
           ["ftyp", "moov", "moof", "styp", "free", "mdat"].contains(String(decoding: type, as: UTF8.self)) {
            return .mp4
        }
        return nil
    }

    static func scan(_ url: URL) -> ContainerIntegrity {
        guard let file = ByteReader(url: url) else {
            return ContainerIntegrity(container: "unknown", clusters: 0, missing: ["the file cannot be opened"])
        }
        switch kind(of: file) {
        case .empty: return ContainerIntegrity(container: "none", clusters: 0, missing: ["the file is empty (nothing was written)"])
        case .matroska: return scanMatroska(file)
        case .mp4: return scanMP4(file)
        case nil: return ContainerIntegrity(container: "unknown", clusters: 0, missing: ["neither a Matroska nor an MP4 file"])
        }
    }

    // MARK: Matroska

    private enum MatroskaID {
        static let segment: UInt64 = 0x1853_8067
        static let info: UInt64 = 0x1549_A966
        static let duration: UInt64 = 0x4489
        static let tracks: UInt64 = 0x1654_AE6B
        static let cluster: UInt64 = 0x1F43_B675
        static let cues: UInt64 = 0x1C53_BB6B
    }

    private static func scanMatroska(_ file: ByteReader) -> ContainerIntegrity {
        var result = ContainerIntegrity(container: "matroska", clusters: 0, missing: [])
        guard let header = file.ebmlElement(at: 0), let headerSize = header.size,
              let segment = file.ebmlElement(at: header.dataStart + headerSize), segment.id == MatroskaID.segment else {
            result.missing.append("no Matroska segment")
            return result
        }
        var segmentEnd = file.size
        if let size = segment.size {
            segmentEnd = min(file.size, segment.dataStart + size)
            if segment.dataStart + size > file.size { result.missing.append("the file is shorter than its segment says") }
        } else {
            result.missing.append("no segment size")
        }
        var hasCues = false, hasTracks = false, duration: Double?
        var offset = segment.dataStart
        var count = 0
        while offset < segmentEnd, count < maxElements {
            count += 1
            guard let element = file.ebmlElement(at: offset) else {
                result.missing.append("the last element is cut short (\(segmentEnd - offset) bytes of header)")
                break
            }
            switch element.id {
            case MatroskaID.cluster: result.clusters += 1
            case MatroskaID.cues: hasCues = true
            case MatroskaID.tracks: hasTracks = true
            case MatroskaID.info: duration = infoDuration(file, element)
            default: break
            }
            guard let size = element.size else {
                // Only the cluster being written has no size yet: nothing follows it.
                result.missing.append(element.id == MatroskaID.cluster ? "the last cluster was never closed" : "an element without a size")
                break
            }
            if element.dataStart + size > segmentEnd {
                let name = element.id == MatroskaID.cluster ? "cluster" : String(format: "element 0x%llX", element.id)
                result.missing.append("the last \(name) is cut short (\(segmentEnd - element.dataStart) of \(size) bytes)")
                break
            }
            offset = element.dataStart + size
        }
        if !hasTracks { result.missing.append("no track list") }
        if result.clusters == 0 { result.missing.append("no media (no cluster)") }
        if !hasCues { result.missing.append("no index (Cues)") }
        if (duration ?? 0) <= 0 { result.missing.append("no duration in the header") }
        return result
    }

    /// The segment duration (in timecode-scale units, > 0 once finalised), from Info's children.
    private static func infoDuration(_ file: ByteReader, _ info: ByteReader.Element) -> Double? {
        guard let size = info.size, size < 1 << 16 else { return nil }
        var offset = info.dataStart
        let end = info.dataStart + size
        while offset < end, let child = file.ebmlElement(at: offset), let childSize = child.size {
            if child.id == MatroskaID.duration, let bytes = file.read(at: child.dataStart, count: Int(childSize)) {
                let bits = bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                switch bytes.count {
                case 4: return Double(Float(bitPattern: UInt32(bits)))
                case 8: return Double(bitPattern: bits)
                default: return nil
                }
            }
            offset = child.dataStart + childSize
        }
        return nil
    }

    // MARK: MP4

    private static func scanMP4(_ file: ByteReader) -> ContainerIntegrity {
        var result = ContainerIntegrity(container: "mp4", clusters: 0, missing: [])
        var seen = Set<String>()
        var offset: UInt64 = 0
        var count = 0
        while offset + 8 <= file.size, count < maxElements {
            count += 1
            guard let header = file.read(at: offset, count: 16) ?? file.read(at: offset, count: 8) else { break }
            let size32 = header[0..<4].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let type = String(decoding: header[4..<8], as: UTF8.self)
            var size = size32
            if size32 == 1 {
                guard header.count == 16 else { result.missing.append("the last \(type) box is cut short"); break }
                size = header[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            } else if size32 == 0 {
                size = file.size - offset
            }
            seen.insert(type)
            if type == "moof" { result.clusters += 1 }
            guard size >= 8 else { result.missing.append("a box with an impossible size at byte \(offset)"); break }
            if offset + size > file.size {
                result.missing.append("the last \(type) box is cut short (\(file.size - offset) of \(size) bytes)")
                break
            }
            offset += size
        }
        if !seen.contains("moov") { result.missing.append("no movie header (moov)") }
        if !seen.contains("mdat") { result.missing.append("no media (no mdat)") }
        if result.clusters > 0, !seen.contains("mfra") { result.missing.append("no fragment index (mfra)") }
        return result
    }
}

/// Positioned reads of a file (`pread`), for header scans.
final class ByteReader {
    struct Element {
        var id: UInt64
        /// nil: unknown size (all ones), as for a cluster still being written.
        var size: UInt64?
        var dataStart: UInt64
    }

    private let descriptor: Int32
    let size: UInt64

    init?(url: URL) {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            return nil
        }
        descriptor = fd
        size = UInt64(info.st_size)
    }

    deinit { close(descriptor) }

    /// Exactly `count` bytes at `offset`, or nil past the end.
    func read(at offset: UInt64, count: Int) -> [UInt8]? {
        guard count >= 0, count <= 1 << 20, offset + UInt64(count) <= size else { return nil }
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, off_t(offset)) }
        return got == count ? bytes : nil
    }

    /// An EBML element header (ID with its marker bits, size without) at `offset`.
    func ebmlElement(at offset: UInt64) -> Element? {
        guard let (id, idLength) = vint(at: offset, keepMarker: true), idLength <= 4,
              let (size, sizeLength) = vint(at: offset + UInt64(idLength), keepMarker: false) else { return nil }
        let unknown = size == (UInt64(1) << (7 * UInt64(sizeLength))) - 1
        return Element(id: id, size: unknown ? nil : size, dataStart: offset + UInt64(idLength + sizeLength))
    }

    private func vint(at offset: UInt64, keepMarker: Bool) -> (UInt64, Int)? {
        guard let first = read(at: offset, count: 1)?.first, first != 0 else { return nil }
        let length = first.leadingZeroBitCount + 1
        guard let bytes = read(at: offset, count: length) else { return nil }
        var value = UInt64(keepMarker ? first : first & (0xFF >> length))
        for byte in bytes.dropFirst() { value = value << 8 | UInt64(byte) }
        return (value, length)
    }
}
