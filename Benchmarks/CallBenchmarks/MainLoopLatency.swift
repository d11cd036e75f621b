import Foundation
import GLibCore

/// How long a job waits for the process's GLib main loop: every 100 ms a probe is queued the way
/// the SDK queues its work (`MainLoop.perform`), and the time until it runs is kept. HTTP, the
/// signaling sockets, bus watches and timers all wait that long, so a loop that falls behind shows
/// here before requests start timing out.
final class MainLoopLatency: Sendable {
    private let waits = Locked<[Double]>([])

    init() {
        let waits = self.waits
        let thread = Thread {
            while true {
                let queued = DispatchTime.now().uptimeNanoseconds
                MainLoop.shared.perform {
                    let ms = Double(DispatchTime.now().uptimeNanoseconds - queued) / 1e6
                    waits.withLock { $0.append(ms) }
                }
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
        thread.name = "loop-latency"
        thread.start()
    }

    /// The median and largest wait since the last call, in ms (`p50/max`), and forgets them.
    func take() -> String {
        let taken = waits.withLock { waits in defer { waits = [] }; return waits.sorted() }
        guard let largest = taken.last else { return "-/-" }
        return String(format: "%.1f/%.0f", taken[taken.count / 2], largest)
    }
}
