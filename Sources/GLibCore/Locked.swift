import Synchronization

/// A value behind a lock, as a class so closures can share it (a `Mutex` cannot be captured).
package final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    package init(_ value: Value) { mutex = Mutex(value) }

    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        try mutex.withLock { try body(&$0) }
    }

    /// A copy of the value. There is no setter: a read-modify-write goes through `withLock`, so
    /// it cannot lose a change made between the read and the write.
    package var value: Value { mutex.withLock { $0 } }
}
