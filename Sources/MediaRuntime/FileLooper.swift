import GLibCore
import GStreamer
import MediaPipeline

/// Loops file sources without gaps: a flushing segment seek to start, then on every
/// SEGMENT_DONE from inside the file's decoder a non-flushing segment seek back to 0, so the
/// pipeline never sees EOS and running time keeps increasing.
final class FileLooper: Sendable {
    private let loops: [(loop: FileLoop, seekTarget: Element)]
    private let pipeline: Pipeline
    private let observation = Locked<BusObservation?>(nil)

    init(loops: [FileLoop], elements: MaterializedGraph, pipeline: Pipeline) {
        self.loops = loops.compactMap { loop in elements.elements[loop.seekTarget].map { (loop, $0) } }
        self.pipeline = pipeline
    }

    func start() {
        let loops = self.loops
        let token = pipeline.observeMessages { message in
            guard case .segmentDone(let source) = message else { return }
            for (loop, target) in loops where source.contains("/\(loop.decoder)") {
                target.seek(to: 0, flushing: false, segment: true)
            }
        }
        observation.withLock { $0 = token }
        for (_, target) in loops { target.seek(to: 0, flushing: true, segment: true) }
    }
}

