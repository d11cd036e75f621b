import Foundation
import MediaPipeline

/// Adapts speaker sinks to the machine: a headless server has no sound device, and
/// `autoaudiosink` there only fills stderr with ALSA errors before falling back. Without a
/// device, far-end audio goes to a clock-synced `fakesink` (timing and echo probing unchanged).
package enum HeadlessAudio {
    /// True when a PulseAudio/PipeWire socket or an ALSA playback device exists.
    package static let outputAvailable: Bool = {
        let environment = ProcessInfo.processInfo.environment
        var sockets: [String] = []
        if let server = environment["PULSE_SERVER"], !server.isEmpty {
            sockets.append(server.hasPrefix("unix:") ? String(server.dropFirst(5)) : server)
        }
        if let runtime = environment["XDG_RUNTIME_DIR"] { sockets.append(runtime + "/pulse/native") }
        sockets.append("/run/user/\(getuid())/pulse/native")
        if sockets.contains(where: { FileManager.default.fileExists(atPath: $0) }) { return true }
        // No readable /dev/snd (a container, a server without sound) means no ALSA device.
        let devices = (try? FileManager.default.contentsOfDirectory(atPath: "/dev/snd")) ?? []
        return devices.contains { $0.hasPrefix("pcmC") && $0.hasSuffix("p") }
    }()

    /// The nodes with device speaker sinks replaced when there is no device, and the decision made.
    static func adapt(_ nodes: [PipelineNode]) -> (nodes: [PipelineNode], decision: String?) {
        guard !outputAvailable, nodes.contains(where: isDeviceSpeaker) else { return (nodes, nil) }
        let adapted = nodes.map { node in
            isDeviceSpeaker(node) ? PipelineNode(id: node.id, factory: "fakesink", properties: [NodeProperty("sync", .bool(true))],
                                                 role: node.role) : node
        }
        return (adapted, "speaker: no audio output device on this machine, far-end audio goes to a clock-synced fakesink")
    }

    private static func isDeviceSpeaker(_ node: PipelineNode) -> Bool {
        node.role == .speakerSink && ["autoaudiosink", "pulsesink", "alsasink"].contains(node.factory)
    }
}

extension PipelineGraph {
    /// This graph adapted to the machine's audio output (see `HeadlessAudio`).
    package func adaptedToAudioOutput() -> PipelineGraph {
        var graph = self
        let (nodes, decision) = HeadlessAudio.adapt(nodes)
        graph.nodes = nodes
        if let decision { graph.decisions.append(decision) }
        return graph
    }
}

extension PipelineFragment {
    /// This fragment adapted to the machine's audio output (see `HeadlessAudio`).
    package func adaptedToAudioOutput() -> PipelineFragment {
        var fragment = self
        let (nodes, decision) = HeadlessAudio.adapt(nodes)
        fragment.nodes = nodes
        if let decision { fragment.decisions.append(decision) }
        return fragment
    }
}
