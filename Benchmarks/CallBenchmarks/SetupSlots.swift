/// At most `limit` calls setting up at once: the load generator takes a slot before dialling and
/// gives it back when the call connects or ends. A 2-core machine asked for 300 DTLS handshakes,
/// pipelines and negotiations at once starves every call of CPU until their set-up timers fire;
/// real callers arrive spread out, and this is the load generator's way of spreading them.
actor SetupSlots {
    private let limit: Int
    private var taken = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(limit: Int) { self.limit = max(1, limit) }

    /// Waits until fewer than `limit` calls are setting up, then counts one more.
    func acquire() async {
        if taken < limit {
            taken += 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// One call finished setting up (connected or ended): the next waiting dial goes, or a slot frees.
    func release() {
        if waiting.isEmpty {
            taken = max(0, taken - 1)
        } else {
            waiting.removeFirst().resume()
        }
    }
}
