/// Adds one video input (source plus normalisation to the call's size and rate) to a graph.
struct VideoSourceBuilder {
    /// `videotestsrc` pattern nicks in GStreamer 1.22.
    static let patterns: [String] = ["smpte", "snow", "black", "white", "red", "green", "blue", "checkers-1", "checkers-2",
                                     "checkers-4", "checkers-8", "circular", "blink", "smpte75", "zone-plate", "gamut",
                                     "chroma-zone-plate", "solid-color", "ball", "smpte100", "bar", "pinwheel", "spokes",
                                     "gradient", "colors", "smpte-rp-219"]

    var parameters: MediaParameters
    var presets: PresetLibrary

    /// The raw caps every video input is normalised to. `pixel-aspect-ratio=1/1` makes
    /// videoscale produce exactly WxH square pixels (what RTP receivers assume) instead of keeping
    /// the source's shape by changing the pixel aspect ratio.
    /// With `videoSizeIsUpperBound` the size is a range up to the limits (even steps, for 4:2:0):
    /// videoscale then fixates it to the source's size, or, when that does not fit, to the
    /// largest size within the limits that keeps the source's display aspect ratio.
    var rawCaps: String {
        let (width, height) = (parameters.videoWidth, parameters.videoHeight)
        let size = parameters.videoSizeIsUpperBound
            ? "width=(int)[16,\(width),2],height=(int)[16,\(height),2]" : "width=\(width),height=\(height)"
        return "video/x-raw,\(size),framerate=\(parameters.effectiveVideoFps)/1,pixel-aspect-ratio=1/1"
    }

    /// Adds source → videoconvert → videoscale → videorate → caps for the input `inputName`,
    /// naming nodes `<prefix>_…`; returns the caps node to link onward and a loop to register.
    func add(_ spec: VideoSourceSpec, inputName: String, prefix: String, into builder: inout GraphBuilder)
        throws(PipelineCompileError) -> (last: String, loop: FileLoop?) {
        let role = NodeRole.videoSource(inputName)
        var loop: FileLoop?
        let sourceEnd: String
        switch spec {
        case .testPattern(let pattern, let live):
            guard Self.patterns.contains(pattern) else {
                throw .invalidSource("unknown videotestsrc pattern \"\(pattern)\"; available: \(Self.patterns.joined(separator: ", "))")
            }
            sourceEnd = try builder.add("\(prefix)_src", "videotestsrc", ["is-live": .bool(live), "pattern": .enumNick(pattern)],
                                        role: role, purpose: "the test-pattern video source")
            builder.decide("video input \(inputName): videotestsrc pattern=\(pattern)" + (live ? " (live)" : " (not live: as fast as downstream takes frames)"))
        case .camera(let device):
            guard !device.isEmpty else { throw .invalidSource("camera device path is empty (e.g. /dev/video0)") }
            sourceEnd = try builder.add("\(prefix)_src", "v4l2src", ["device": .string(device)], role: role, purpose: "the V4L2 camera source")
            builder.decide("video input \(inputName): v4l2src device=\(device)")
        case .file(let path, let shouldLoop):
            guard !path.isEmpty else { throw .invalidSource("video file path is empty") }
            let file = try builder.add("\(prefix)_src", "filesrc", ["location": .string(path)], role: role, purpose: "the video file source")
            let decoder = try builder.add("\(prefix)_decode", "decodebin", purpose: "decoding the video file")
            sourceEnd = try builder.add("\(prefix)_sync", "clocksync", purpose: "playing the video file in real time")
            builder.link(file, decoder)
            builder.link(decoder, sourceEnd, dynamicSourcePad: .video)
            if shouldLoop { loop = FileLoop(kind: .video, source: file, decoder: decoder, seekTarget: sourceEnd) }
            builder.decide("video input \(inputName): file \(path), paced by clocksync" + (shouldLoop ? ", looped by the runtime with segment seeks" : ", ends with EOS"))
        case .app(let name, let caps):
            let appCaps = caps ?? "video/x-raw,format=I420,width=\(parameters.videoWidth),height=\(parameters.videoHeight),framerate=\(parameters.effectiveVideoFps)/1"
            sourceEnd = try builder.add(name, "appsrc", ["format": .enumNick("time"), "is-live": .bool(true), "do-timestamp": .bool(false),
                                                         "caps": .caps(appCaps)], role: role, purpose: "the application video source")
            builder.decide("video input \(inputName): appsrc \(name) (the application pushes timestamped \(appCaps) buffers)")
        case .preset(let name):
            let preset = try presets.preset(named: name, kind: .videoSource)
            sourceEnd = try PresetExpansion.add(preset, prefix: "\(prefix)_src", firstRole: role, into: &builder)
            builder.decide("video input \(inputName): preset \(name) (\(preset.launch))")
        }
        let convert = try builder.add("\(prefix)_convert", "videoconvert", purpose: "video format conversion")
        let scale = try builder.add("\(prefix)_scale", "videoscale", purpose: "scaling video to the call's size")
        // drop-only: a videorate that may duplicate holds every frame one interval (33 ms at
        // 30 fps, measured) to decide; dropping only passes frames straight through.
        let rate = try builder.add("\(prefix)_rate", "videorate", ["drop-only": .bool(true)], purpose: "adapting video to the call's frame rate")
        let caps = try builder.addCaps("\(prefix)_caps", rawCaps, role: .videoFormat)
        builder.chain([sourceEnd, convert, scale, rate, caps])
        return (caps, loop)
    }
}

/// Turns a preset's chain into nodes named `<prefix>`, `<prefix>1`, `<prefix>2`, …
enum PresetExpansion {
    /// Adds the chain, links it, and returns its last node. The first node gets `firstRole`.
    static func add(_ preset: Preset, prefix: String, firstRole: NodeRole, into builder: inout GraphBuilder)
        throws(PipelineCompileError) -> String {
        var ids: [String] = []
        for (index, element) in preset.elements.enumerated() {
            let id = index == 0 ? prefix : "\(prefix)\(index)"
            let role = index == 0 ? firstRole : NodeRole.preset(preset.name)
            switch element {
            case .element(let factory, let properties):
                try builder.add(PipelineNode(id: id, factory: factory, properties: properties, role: role),
                                purpose: "the preset \"\(preset.name)\"")
            case .caps(let caps):
                try builder.addCaps(id, caps, role: role)
            }
            ids.append(id)
        }
        builder.chain(ids)
        return ids.last!
    }
}
