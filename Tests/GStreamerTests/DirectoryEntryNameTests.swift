import Glibc
@testable import GStreamer
import Testing

/// `DatagramSocket.entryName` reads a `readdir` record's name within the record. The kernel
/// packs records by their real length (about 24 bytes for a descriptor number), so a record can end
/// where mapped memory ends; the test places one exactly there, before a page that may not be read.
/// Reading `dirent`'s whole 256-byte name array (the code before) dies here with SIGSEGV.
@Suite struct DirectoryEntryNameTests {
    @Test func aRecordEndingAMappingIsReadWithinItsLength() throws {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let mapping = try #require(mmap(nil, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
        try #require(mapping != MAP_FAILED)
        defer { munmap(mapping, 2 * page) }
        try #require(mprotect(mapping + page, page, PROT_NONE) == 0)

        let nameOffset = try #require(MemoryLayout<dirent>.offset(of: \dirent.d_name))
        let lengthOffset = try #require(MemoryLayout<dirent>.offset(of: \dirent.d_reclen))
        let name = Array("1234".utf8) + [0]
        let recordLength = (nameOffset + name.count + 7) & ~7
        let record = mapping + page - recordLength
        record.storeBytes(of: UInt16(recordLength), toByteOffset: lengthOffset, as: UInt16.self)
        for (index, byte) in name.enumerated() { record.storeBytes(of: byte, toByteOffset: nameOffset + index, as: UInt8.self) }

        #expect(DatagramSocket.entryName(record.assumingMemoryBound(to: dirent.self)) == "1234")
    }

    /// A name that fills its record with no terminating zero (never written by the kernel, but the
    /// length bounds the read all the same).
    @Test func aNameWithoutItsZeroStopsAtTheRecordsEnd() throws {
        let nameOffset = try #require(MemoryLayout<dirent>.offset(of: \dirent.d_name))
        var entry = dirent()
        entry.d_reclen = UInt16(nameOffset + 3)
        withUnsafeMutableBytes(of: &entry.d_name) { $0.copyBytes(from: Array("56789".utf8)) }
        #expect(DatagramSocket.entryName(&entry) == "567")
    }
}
