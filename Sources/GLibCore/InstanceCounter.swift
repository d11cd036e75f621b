import Synchronization

/// Counts live instances of the SDK's own heavyweight objects (peer connections, calls, bots), so
/// leak tests can name the Swift object that keeps GStreamer objects alive, not just the objects.
package enum InstanceCounter {
    private static let counts = Mutex<[String: Int]>([:])

    package static func increment(_ name: String) { counts.withLock { $0[name, default: 0] += 1 } }
    package static func decrement(_ name: String) { counts.withLock { $0[name, default: 0] -= 1 } }

    /// Live instances by type name (types with none are left out).
    package static var live: [String: Int] { counts.withLock { $0.filter { $0.value != 0 } } }
}
