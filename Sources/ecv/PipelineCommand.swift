import MediaPipeline
import MediaRuntime

/// `ecv pipeline`: the compiled send graph for the given parameters, as gst-launch text or DOT.
enum PipelineCommand {
    static let usage = """
        ecv pipeline [options]   print the media graph ConnectParameters compile to
          --format launch|dot      gst-launch-1.0 text (default) or Graphviz
          --receive KIND           print the receive fragment for an incoming VP8/VP9/H264/OPUS
                                   stream instead (e.g. --receive H264)
          --test-run               the self-running variant (60 buffers, fakesinks)
          --presets DIR            extra presets (*.pipeline) overriding the built-in ones
        \(MediaOptions.help)
        """

    static let spec = OptionSpec(values: ["format", "receive", "presets"], flags: ["test-run"]) + MediaOptions.spec

    static func run(_ words: [String]) throws(CLIError) {
        var arguments = try Arguments(words, spec)
        try arguments.exclusive("receive", "test-run", because: "--test-run is the send graph's self-running variant")
        let parameters = try MediaOptions.parameters(&arguments)
        let presets = try MediaOptions.presets(&arguments)
        let video = MediaOptions.video(&arguments)
        let audio = MediaOptions.audio(&arguments)
        let format = arguments.value("format") ?? "launch"
        let receive = arguments.value("receive")
        let testRun = arguments.flag("test-run")
        try arguments.finish()
        guard format == "launch" || format == "dot" else { throw .usage("--format takes launch or dot, not '\(format)'") }
        let compiler = PipelineCompiler(catalog: LiveCatalog.shared, presets: presets)
        do throws(PipelineCompileError) {
            if let receive {
                let kind: MediaKind = receive.uppercased() == "OPUS" ? .audio : .video
                let fragment = try compiler.compileReceive(kind: kind, encodingName: receive.uppercased(),
                                                           sink: kind == .video ? .renderer(name: "remote_video") : .playback,
                                                           parameters: parameters.media)
                print(format == "dot" ? fragment.dot : fragment.launchDescription)
                for decision in fragment.decisions { printErr("# \(decision)") }
                return
            }
            let graph = try compiler.compileSend(parameters: parameters.media, video: .single(video), audio: audio).adaptedToAudioOutput()
            print(format == "dot" ? graph.dot : graph.launchDescription(testRun: testRun))
            for decision in graph.decisions { printErr("# \(decision)") }
        } catch {
            throw MediaOptions.optionError(error)
        }
    }
}
