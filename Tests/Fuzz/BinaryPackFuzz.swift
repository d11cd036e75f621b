// libFuzzer target `binarypack`: what a PeerJS peer sends on a `binary` data connection
// (docs/protocol.md §8.7), as BinaryPackValue reads it and BinaryPackChunking puts it together.
// Properties: reading never traps; a value read packs to bytes that read back to the same value;
// chunks of the input put together give the input back; a reassembly never holds more than its bound.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBinaryPack(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let value = try? BinaryPackValue.unpack(bytes) { // refused input is fine
        let again: BinaryPackValue
        do { again = try BinaryPackValue.unpack(value.packed()) } catch { fatalError("a value's own packing does not read: \(error)") }
        if again != value && !containsNaN(value) { fatalError("a value changed in a round trip:\n\(value)\n\(again)") }
        if let chunk = BinaryPackChunking.Chunk(value) {
            var reassembly = BinaryPackChunking.Reassembly(maxMessageBytes: 64 << 10)
            if let whole = try? reassembly.add(chunk), whole.count > 64 << 10 { // refused and partial chunks are fine
                fatalError("a chunked message over its bound was put together")
            }
        }
    }
    // The input as one message's packed bytes, chunked and put together in reverse order.
    let frames = BinaryPackChunking.frames(for: bytes, id: 7)
    var reassembly = BinaryPackChunking.Reassembly(maxMessageBytes: 1 << 20)
    var whole: [UInt8]?
    for frame in frames.reversed() {
        guard frames.count > 1 else { whole = frame; break }
        let value: BinaryPackValue
        do { value = try BinaryPackValue.unpack(frame) } catch { fatalError("a chunk does not read: \(error)") }
        guard let chunk = BinaryPackChunking.Chunk(value) else { fatalError("a chunk is not read as one") }
        do { whole = try reassembly.add(chunk) } catch { fatalError("our own chunks were refused: \(error)") }
    }
    if whole != bytes { fatalError("chunks did not put the message together") }
    return 0
}

private func containsNaN(_ value: BinaryPackValue) -> Bool {
    switch value {
    case .double(let number): number.isNaN
    case .array(let values): values.contains(where: containsNaN)
    case .map(let pairs): pairs.contains { containsNaN($0.key) || containsNaN($0.value) }
    default: false
    }
}
