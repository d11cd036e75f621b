/// Width, height, pixel format and plane layout of raw video.
public struct VideoInfo: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var format: String
    public var framerate: (numerator: Int, denominator: Int)
    public var strides: [Int]
    public var offsets: [Int]
    public var size: Int

    public init(width: Int, height: Int, format: String, framerate: (numerator: Int, denominator: Int), strides: [Int], offsets: [Int],
                size: Int) {
        self.width = width
        self.height = height
        self.format = format
        self.framerate = framerate
        self.strides = strides
        self.offsets = offsets
        self.size = size
    }

    public static func == (lhs: VideoInfo, rhs: VideoInfo) -> Bool {
        lhs.width == rhs.width && lhs.height == rhs.height && lhs.format == rhs.format
            && lhs.framerate == rhs.framerate && lhs.strides == rhs.strides && lhs.offsets == rhs.offsets && lhs.size == rhs.size
    }
}

/// A copied raw video frame: what a headless renderer receives.
public struct VideoFrame: Sendable {
    public var info: VideoInfo
    /// Presentation timestamp in nanoseconds.
    public var pts: UInt64?
    public var data: [UInt8]

    public var width: Int { info.width }
    public var height: Int { info.height }
    public var format: String { info.format }

    public init(info: VideoInfo, pts: UInt64?, data: [UInt8]) {
        self.info = info
        self.pts = pts
        self.data = data
    }
}
