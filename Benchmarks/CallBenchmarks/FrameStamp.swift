/// A frame counter drawn into the pixels of an I420 frame and read back from a decoded RGBA frame,
/// so a frame can be recognised after encoding, RTP, decoding and conversion.
///
/// 16 bits as 32×32 blocks, white for 1 and black for 0, in a row near the top-left corner, and
/// below it the same bits inverted: a frame whose two rows do not complement each other is
/// counted unreadable instead of being misread. The rest of the frame is a moving ramp, so the
/// encoder has real work and every frame differs.
struct FrameStamp: Sendable {
    static let bits = 16
    static let block = 32
    static let spacing = 36
    static let origin = (x: 16, y: 16)
    static let rowGap = 40
    static let white: UInt8 = 235
    static let black: UInt8 = 16

    let width: Int
    let height: Int
    var frameSize: Int { width * height * 3 / 2 }

    init(width: Int, height: Int) {
        precondition(width >= Self.origin.x + Self.bits * Self.spacing && height >= Self.origin.y + Self.rowGap + Self.block,
                     "the frame is too small for the stamp")
        self.width = width
        self.height = height
    }

    /// A frame buffer with neutral chroma, for `draw` to fill.
    func blankFrame() -> [UInt8] {
        var frame = [UInt8](repeating: 128, count: frameSize)
        for index in 0..<(width * height) { frame[index] = Self.black }
        return frame
    }

    /// Draws frame number `counter` into `frame` (I420, `frameSize` bytes).
    func draw(_ counter: Int, into frame: inout [UInt8]) {
        let width = self.width
        frame.withUnsafeMutableBufferPointer { pixels in
            // A sawtooth ramp moving 4 pixels a frame, identical on every row.
            for x in 0..<width {
                pixels[x] = UInt8(16 + ((x + 4 * counter) & 255) * 219 / 255)
            }
            let base = pixels.baseAddress!
            for y in 1..<height { (base + y * width).update(from: base, count: width) }
            for bit in 0..<Self.bits {
                let isSet = (counter >> bit) & 1 == 1
                fill(pixels, x: Self.origin.x + bit * Self.spacing, y: Self.origin.y, value: isSet ? Self.white : Self.black)
                fill(pixels, x: Self.origin.x + bit * Self.spacing, y: Self.origin.y + Self.rowGap, value: isSet ? Self.black : Self.white)
            }
        }
    }

    private func fill(_ pixels: UnsafeMutableBufferPointer<UInt8>, x: Int, y: Int, value: UInt8) {
        for row in y..<(y + Self.block) {
            let start = row * width + x
            UnsafeMutableBufferPointer(rebasing: pixels[start..<(start + Self.block)]).update(repeating: value)
        }
    }

    /// The counter in an RGBA frame of the same size with rows `stride` bytes apart, or nil when
    /// the two rows disagree.
    static func read(rgba: UnsafeRawBufferPointer, stride: Int) -> Int? {
        var counter = 0
        for bit in 0..<bits {
            let x = origin.x + bit * spacing + block / 2
            guard let value = brightness(rgba, stride: stride, x: x, y: origin.y + block / 2),
                  let inverse = brightness(rgba, stride: stride, x: x, y: origin.y + rowGap + block / 2) else { return nil }
            let isSet = value > 128
            guard isSet == (inverse <= 128) else { return nil }
            if isSet { counter |= 1 << bit }
        }
        return counter
    }

    /// Mean of R, G and B over the 5×5 pixels around (x, y).
    private static func brightness(_ rgba: UnsafeRawBufferPointer, stride: Int, x: Int, y: Int) -> Int? {
        var sum = 0
        for dy in -2...2 {
            for dx in -2...2 {
                let offset = (y + dy) * stride + (x + dx) * 4
                guard offset >= 0, offset + 2 < rgba.count else { return nil }
                sum += Int(rgba[offset]) + Int(rgba[offset + 1]) + Int(rgba[offset + 2])
            }
        }
        return sum / 75
    }
}
