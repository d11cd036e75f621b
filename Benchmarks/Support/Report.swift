/// Everything one benchmark run measured. Each program fills the sections it owns and writes the
/// report as JSON; `merging` combines the parts of one `Benchmarks/run.sh` run into a single report.
public struct BenchmarkReport: Codable, Sendable {
    public var machine: MachineInfo
    /// True for `--smoke` runs: tiny frame counts, figures meaningless except as a check that it works.
    public var smoke: Bool
    public var encode: EncodeSection?
    public var overhead: OverheadSection?
    public var peer: PeerSection?
    public var glassToGlass: GlassToGlassSection?
    public var callSetup: CallSetupSection?
    public var callCost: CallCostSection?
    public var lipSync: LipSyncSection?
    public var instructions: InstructionsSection?
    /// Hooks for the ECV SDK benchmarks (call setup time, cost of a call); a note until they exist.
    public var pending: [String: String]?

    public init(machine: MachineInfo, smoke: Bool) {
        self.machine = machine
        self.smoke = smoke
    }

    /// This report with every section `other` has and this one lacks (or `other`'s newer one).
    public func merging(_ other: BenchmarkReport) -> BenchmarkReport {
        var merged = self
        merged.smoke = smoke || other.smoke
        merged.encode = other.encode ?? encode
        merged.overhead = other.overhead ?? overhead
        merged.peer = other.peer ?? peer
        merged.glassToGlass = other.glassToGlass ?? glassToGlass
        merged.callSetup = other.callSetup ?? callSetup
        merged.callCost = other.callCost ?? callCost
        merged.lipSync = other.lipSync ?? lipSync
        merged.instructions = other.instructions ?? instructions
        if let pending = other.pending { merged.pending = (self.pending ?? [:]).merging(pending) { _, new in new } }
        return merged
    }
}

/// The system load while a section ran: numbers taken on a shared machine mean little without it.
public struct LoadWindow: Codable, Sendable {
    /// 1-minute load average when the section started and when it ended.
    public var start: Double
    public var end: Double
    public var wallSeconds: Double

    public init(start: Double, end: Double, wallSeconds: Double) {
        self.start = start
        self.end = end
        self.wallSeconds = wallSeconds
    }
}

// MARK: Encode latency

public struct EncodeSection: Codable, Sendable {
    public var method: String
    public var figures: [EncodeFigure]
    public var load: LoadWindow?

    public init(method: String, figures: [EncodeFigure], load: LoadWindow?) {
        self.method = method
        self.figures = figures
        self.load = load
    }
}

public struct EncodeFigure: Codable, Sendable {
    public var codec: String
    public var encoder: String
    public var width: Int
    public var height: Int
    public var kbps: Int
    /// "live" (30 fps, paced by the clock) or "non-live" (as fast as the encoder takes frames).
    public var source: String
    /// Frames the source produced.
    public var framesOffered: Int
    /// Frames seen at both encoder pads (matched by PTS): the sample count of `latency`.
    public var framesEncoded: Int
    /// Encoder sink pad → encoder src pad, pad probes, CLOCK_MONOTONIC.
    public var latency: LatencySummary?
    /// The latency tracer's `element-latency` records for the encoder, as a cross-check.
    public var tracer: LatencySummary?
    /// Encoded frames per second of wall time from the first frame in to the last out (non-live only).
    public var sustainedFps: Double?
    /// getrusage user+sys of the whole process from PLAYING to end-of-stream, per encoded frame.
    public var cpuMsPerFrame: Double
    public var wallSeconds: Double
    /// The encoder's properties as compiled, for the record.
    public var encoderSettings: String

    public init(codec: String, encoder: String, width: Int, height: Int, kbps: Int, source: String, framesOffered: Int,
                framesEncoded: Int, latency: LatencySummary?, tracer: LatencySummary?, sustainedFps: Double?,
                cpuMsPerFrame: Double, wallSeconds: Double, encoderSettings: String) {
        self.codec = codec
        self.encoder = encoder
        self.width = width
        self.height = height
        self.kbps = kbps
        self.source = source
        self.framesOffered = framesOffered
        self.framesEncoded = framesEncoded
        self.latency = latency
        self.tracer = tracer
        self.sustainedFps = sustainedFps
        self.cpuMsPerFrame = cpuMsPerFrame
        self.wallSeconds = wallSeconds
        self.encoderSettings = encoderSettings
    }
}

// MARK: Framework overhead

public struct OverheadSection: Codable, Sendable {
    public var method: String
    public var figures: [OverheadFigure]
    public var load: LoadWindow?

    public init(method: String, figures: [OverheadFigure], load: LoadWindow?) {
        self.method = method
        self.figures = figures
        self.load = load
    }
}

/// One run of a graph, by ECVKit in-process or by gst-launch-1.0 as a child.
public struct OverheadSample: Codable, Sendable {
    /// The latency tracer's encoder `element-latency` records.
    public var encoderLatency: LatencySummary?
    /// (CPU of an N-frame run − CPU of a 1-frame run) / (N − 1): start-up and teardown cancel out.
    public var cpuMsPerFrame: Double
    public var cpuFullRunMs: Double
    public var cpuOneFrameRunMs: Double

    public init(encoderLatency: LatencySummary?, cpuMsPerFrame: Double, cpuFullRunMs: Double, cpuOneFrameRunMs: Double) {
        self.encoderLatency = encoderLatency
        self.cpuMsPerFrame = cpuMsPerFrame
        self.cpuFullRunMs = cpuFullRunMs
        self.cpuOneFrameRunMs = cpuOneFrameRunMs
    }
}

public struct OverheadFigure: Codable, Sendable {
    public var codec: String
    public var encoder: String
    public var width: Int
    public var height: Int
    public var kbps: Int
    public var frames: Int
    public var ours: [OverheadSample]
    public var gstLaunch: [OverheadSample]
    /// ours p50 / gst-launch p50, one value per repetition pair.
    public var latencyRatio: Spread?
    /// ours CPU per frame / gst-launch CPU per frame, one value per repetition pair.
    public var cpuRatio: Spread?
    public var launchLine: String

    public init(codec: String, encoder: String, width: Int, height: Int, kbps: Int, frames: Int, ours: [OverheadSample],
                gstLaunch: [OverheadSample], launchLine: String) {
        self.codec = codec
        self.encoder = encoder
        self.width = width
        self.height = height
        self.kbps = kbps
        self.frames = frames
        self.ours = ours
        self.gstLaunch = gstLaunch
        self.launchLine = launchLine
        let pairs = zip(ours, gstLaunch)
        latencyRatio = Spread(pairs.compactMap { pair in
            guard let mine = pair.0.encoderLatency?.p50, let theirs = pair.1.encoderLatency?.p50, theirs > 0 else { return nil }
            return mine / theirs
        })
        cpuRatio = Spread(pairs.compactMap { pair in pair.1.cpuMsPerFrame > 0 ? pair.0.cpuMsPerFrame / pair.1.cpuMsPerFrame : nil })
    }
}

// MARK: Peer side by side

public struct PeerSection: Codable, Sendable {
    public var method: String
    public var frames: Int
    public var width: Int
    public var height: Int
    public var kbps: Int
    public var ours: [PeerFigure]
    /// Filled when the aiortc results are merged in.
    public var aiortc: [PeerFigure]
    public var aiortcVersion: String?
    public var load: LoadWindow?

    public init(method: String, frames: Int, width: Int, height: Int, kbps: Int, ours: [PeerFigure], load: LoadWindow?) {
        self.method = method
        self.frames = frames
        self.width = width
        self.height = height
        self.kbps = kbps
        self.ours = ours
        aiortc = []
        self.load = load
    }
}

public struct PeerFigure: Codable, Sendable {
    /// "VP8" or "H264".
    public var codec: String
    public var implementation: String
    /// Time to turn one raw frame into RTP payloads (ours: encoder sink pad → last payloader
    /// packet of the frame; aiortc: one `encoder.encode(frame)` call, which packetizes too).
    public var perFrame: LatencySummary?
    /// Ours only: encoder sink pad → encoder src pad.
    public var encoderOnly: LatencySummary?
    /// Ours only: appsrc src pad → encoder sink pad (conversion, videorate, queue).
    public var sourceToEncoder: LatencySummary?
    public var cpuMsPerFrame: Double

    public init(codec: String, implementation: String, perFrame: LatencySummary?, encoderOnly: LatencySummary?,
                sourceToEncoder: LatencySummary? = nil, cpuMsPerFrame: Double) {
        self.codec = codec
        self.implementation = implementation
        self.perFrame = perFrame
        self.encoderOnly = encoderOnly
        self.sourceToEncoder = sourceToEncoder
        self.cpuMsPerFrame = cpuMsPerFrame
    }
}

// MARK: Glass-to-glass

public struct GlassToGlassSection: Codable, Sendable {
    public var method: String
    public var figures: [GlassToGlassFigure]
    public var load: LoadWindow?

    public init(method: String, figures: [GlassToGlassFigure], load: LoadWindow?) {
        self.method = method
        self.figures = figures
        self.load = load
    }
}

public struct GlassToGlassFigure: Codable, Sendable {
    public var codec: String
    public var width: Int
    public var height: Int
    public var kbps: Int
    public var jitterBufferMs: Int
    /// Stamped frames pushed after the warm-up.
    public var framesSent: Int
    /// Of those, frames whose stamp was read at the far renderer.
    public var framesReceived: Int
    /// Frames rendered after the first readable one whose stamp could not be read (a failed check row).
    public var framesUnreadable: Int
    public var latency: LatencySummary?
    /// From starting both peers to the first frame whose stamp the renderer could read (the
    /// decoder needs a keyframe first).
    public var firstFrameSeconds: Double?

    public init(codec: String, width: Int, height: Int, kbps: Int, jitterBufferMs: Int, framesSent: Int, framesReceived: Int,
                framesUnreadable: Int, latency: LatencySummary?, firstFrameSeconds: Double?) {
        self.codec = codec
        self.width = width
        self.height = height
        self.kbps = kbps
        self.jitterBufferMs = jitterBufferMs
        self.framesSent = framesSent
        self.framesReceived = framesReceived
        self.framesUnreadable = framesUnreadable
        self.latency = latency
        self.firstFrameSeconds = firstFrameSeconds
    }
}
