/// A dictionary that remembers which keys were written since it was last asked. The ACD's
/// tables are these, so its derived index (queues in order, free agents, deadlines) is brought
/// up to date from exactly the records that changed, whatever code path changed them.
struct TrackedTable<Value> {
    private(set) var storage: [String: Value] = [:]
    /// Keys written (set, modified or removed) since the last `takeTouched()`; may repeat.
    private var touched: [String] = []

    init() {}

    subscript(key: String) -> Value? {
        get { storage[key] }
        _modify {
            defer { touched.append(key) }
            yield &storage[key]
        }
    }

    var values: Dictionary<String, Value>.Values { storage.values }
    var keys: Dictionary<String, Value>.Keys { storage.keys }
    var count: Int { storage.count }
    var isEmpty: Bool { storage.isEmpty }

    @discardableResult
    mutating func removeValue(forKey key: String) -> Value? {
        touched.append(key)
        return storage.removeValue(forKey: key)
    }

    /// The keys written since the last call, each once, in the order first written.
    mutating func takeTouched() -> [String] {
        guard !touched.isEmpty else { return [] }
        defer { touched.removeAll(keepingCapacity: true) }
        if touched.count == 1 { return touched }
        var seen = Set<String>()
        return touched.filter { seen.insert($0).inserted }
    }

    /// Forgets what was written (after a full rebuild of whatever derives from the table).
    mutating func clearTouched() { touched.removeAll(keepingCapacity: true) }
}

extension TrackedTable: Sequence {
    func makeIterator() -> Dictionary<String, Value>.Iterator { storage.makeIterator() }
}
