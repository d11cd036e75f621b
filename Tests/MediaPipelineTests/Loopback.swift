@testable import MediaPipeline

/// A send graph whose RTP outputs feed receive fragments directly (no webrtcbin, no network):
/// proves the compiled pieces fit together, including far-end audio joining the AEC speaker mixer.
struct Loopback {
    var send: PipelineGraph
    var fragments: [PipelineFragment]

    init(_ parameters: MediaParameters, video: ReceiveSinkSpec = .renderer(name: "remote_video"), audio: ReceiveSinkSpec = .playback) throws {
        send = try Fixtures.compile(parameters)
        let compiler = PipelineCompiler(catalog: Fixtures.software)
        fragments = try send.outputs.map { output in
            try compiler.compileReceive(kind: output.kind, encodingName: output.encodingName,
                                        sink: output.kind == .video ? video : audio, parameters: parameters)
        }
    }

    var joined: ([PipelineNode], [PipelineLink]) {
        var nodes = send.nodes
        var links = send.links
        for (output, fragment) in zip(send.outputs, fragments) {
            nodes += fragment.nodes
            links += fragment.links
            links.append(PipelineLink(from: PadRef(output.node), to: PadRef(fragment.entry.node)))
            if let exit = fragment.exit, let target = fragment.exitTarget {
                links.append(PipelineLink(from: exit, to: target))
            }
        }
        return (nodes, links)
    }

    var launchDescription: String { LaunchRenderer(nodes: joined.0, links: joined.1).render() }

    var testRunLaunchDescription: String {
        let variant = TestRunVariant.apply(to: joined, openEnds: [])
        return LaunchRenderer(nodes: variant.0, links: variant.1).render()
    }
}
