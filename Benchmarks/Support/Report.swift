/// Everything one benchmark run measured. Each program fills the sections it owns and writes the
/// report as JSON; `merging` combines the parts of one `Benchmarks/run.sh` run into a single report.
package struct BenchmarkReport: Codable, Sendable {
    package var machine: MachineInfo
    /// True for `--smoke` runs: tiny frame counts, figures meaningless except as a check that it works.
    package var smoke: Bool
    package var encode: EncodeSection?
    package var overhead: OverheadSection?
    package var peer: PeerSection?
    package var glassToGlass: GlassToGlassSection?
    package var callSetup: CallSetupSection?
    package var callCost: CallCostSection?
    package var lipSync: LipSyncSection?
    package var instructions: InstructionsSection?
    /// Hooks for the ECV SDK benchmarks (call setup time, cost of a call); a note until they exist.
    package var pending: [String: String]?

    package init(machine: MachineInfo, smoke: Bool) {
        self.machine = machine
        self.smoke = smoke
    }

    /// This report with every section `other` has and this one lacks (or `other`'s newer one).
    package func merging(_ other: BenchmarkReport) -> BenchmarkReport {
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
package struct LoadWindow: Codable, Sendable {
    /// 1-minute load average when the section started and when it ended.
    package var start: Double
    package var end: Double
    package var wallSeconds: Double

    package init(start: Double, end: Double, wallSeconds: Double) {
        self.start = start
        self.end = end
        self.wallSeconds = wallSeconds
    }
}

// MARK: Encode latency

package struct EncodeSection: Codable, Sendable {
    package var method: String
    package var figures: [EncodeFigure]
    package var load: LoadWindow?

    package init(method: String, figures: [EncodeFigure], load: LoadWindow?) {
        self.method = method
        self.figures = figures
        self.load = load
    }
}

package struct EncodeFigure: Codable, Sendable {
    package var codec: String
    package var encoder: String
    package var width: Int
    package var height: Int
    package var kbps: Int
    /// "live" (30 fps, paced by the clock) or "non-live" (as fast as the encoder takes frames).
    package var source: String
    /// Frames the source produced.
    package var framesOffered: Int
    /// Frames seen at both encoder pads (matched by PTS): the sample count of `latency`.
    package var framesEncoded: Int
    /// Encoder sink pad → encoder src pad, pad probes, CLOCK_MONOTONIC.
    package var latency: LatencySummary?
    /// The latency tracer's `element-latency` records for the encoder, as a cross-check.
    package var tracer: LatencySummary?
    /// Encoded frames per second of wall time from the first frame in to the last out (non-live only).
    package var sustainedFps: Double?
    /// getrusage user+sys of the whole process from PLAYING to end-of-stream, per encoded frame.
    package var cpuMsPerFrame: Double
    package var wallSeconds: Double
    /// The encoder's properties as compiled, for the record.
    package var encoderSettings: String

    package init(codec: String, encoder: String, width: Int, height: Int, kbps: Int, source: String, framesOffered: Int,
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

package struct OverheadSection: Codable, Sendable {
    package var method: String
    package var figures: [OverheadFigure]
    package var load: LoadWindow?

    package init(method: String, figures: [OverheadFigure], load: LoadWindow?) {
        self.method = method
        self.figures = figures
        self.load = load
    }
}

/// One run of a graph, by ECVKit in-process or by gst-launch-1.0 as a child.
package struct OverheadSample: Codable, Sendable {
    /// The latency tracer's encoder `element-latency` records.
    package var encoderLatency: LatencySummary?
    /// (CPU of an N-frame run − CPU of a 1-frame run) / (N − 1): start-up and teardown cancel out.
    package var cpuMsPerFrame: Double
    package var cpuFullRunMs: Double
    package var cpuOneFrameRunMs: Double

    package init(encoderLatency: LatencySummary?, cpuMsPerFrame: Double, cpuFullRunMs: Double, cpuOneFrameRunMs: Double) {
        self.encoderLatency = encoderLatency
        self.cpuMsPerFrame = cpuMsPerFrame
        self.cpuFullRunMs = cpuFullRunMs
        self.cpuOneFrameRunMs = cpuOneFrameRunMs
    }
}

package struct OverheadFigure: Codable, Sendable {
    package var codec: String
    package var encoder: String
    package var width: Int
    package var height: Int
    package var kbps: Int
    package var frames: Int
    package var ours: [OverheadSample]
    package var gstLaunch: [OverheadSample]
    /// ours p50 / gst-launch p50, one value per repetition pair.
    package var latencyRatio: Spread?
    /// ours CPU per frame / gst-launch CPU per frame, one value per repetition pair.
    package var cpuRatio: Spread?
    package var launchLine: String

    package init(codec: String, encoder: String, width: Int, height: Int, kbps: Int, frames: Int, ours: [OverheadSample],
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

package struct PeerSection: Codable, Sendable {
    package var method: String
    package var frames: Int
    package var width: Int
    package var height: Int
    package var kbps: Int
    package var ours: [PeerFigure]
    /// Filled when the aiortc results are merged in.
    package var aiortc: [PeerFigure]
    package var aiortcVersion: String?
    package var load: LoadWindow?

    package init(method: String, frames: Int, width: Int, height: Int, kbps: Int, ours: [PeerFigure], load: LoadWindow?) {
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

package struct PeerFigure: Codable, Sendable {
    /// "VP8" or "H264".
    package var codec: String
    package var implementation: String
    /// Time to turn one raw frame into RTP payloads (ours: encoder sink pad → last payloader
    /// packet of the frame; aiortc: one `encoder.encode(frame)` call, which packetizes too).
    package var perFrame: LatencySummary?
    /// Ours only: encoder sink pad → encoder src pad.
    package var encoderOnly: LatencySummary?
    /// Ours only: appsrc src pad → encoder sink pad (conversion, videorate, queue).
    package var sourceToEncoder: LatencySummary?
    package var cpuMsPerFrame: Double

    package init(codec: String, implementation: String, perFrame: LatencySummary?, encoderOnly: LatencySummary?,
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

package struct GlassToGlassSection: Codable, Sendable {
    package var method: String
    package var figures: [GlassToGlassFigure]
    package var load: LoadWindow?

    package init(method: String, figures: [GlassToGlassFigure], load: LoadWindow?) {
        self.method = method
        self.figures = figures
        self.load = load
    }
}

package struct GlassToGlassFigure: Codable, Sendable {
    package var codec: String
    package var width: Int
    package var height: Int
    package var kbps: Int
    package var jitterBufferMs: Int
    /// Stamped frames pushed after the warm-up.
    package var framesSent: Int
    /// Of those, frames whose stamp was read at the far renderer.
    package var framesReceived: Int
    /// Frames rendered after the first readable one whose stamp could not be read (a failed check row).
    package var framesUnreadable: Int
    package var latency: LatencySummary?
    /// From starting both peers to the first frame whose stamp the renderer could read (the
    /// decoder needs a keyframe first).
    package var firstFrameSeconds: Double?

    package init(codec: String, width: Int, height: Int, kbps: Int, jitterBufferMs: Int, framesSent: Int, framesReceived: Int,
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
