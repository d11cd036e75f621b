internal import CGStreamer
internal import CGStreamerShims

extension Element {
    /// Every element inside this one: a bin's children, then theirs, and so on (none for an
    /// element that is not a bin).
    package var descendants: [Element] {
        guard isA("GstBin") else { return [] }
        var children: [Element] = []
        withObjectLock(gstObject) {
            var node = raw.assumingMemoryBound(to: GstBin.self).pointee.children
            while let current = node {
                if let data = current.pointee.data, let child = Object.wrap(data, .borrowed) as? Element { children.append(child) }
                node = current.pointee.next
            }
        }
        return children.flatMap { [$0] + $0.descendants }
    }

    /// Stops this element for good (`stopForRemoval()`), then every element inside it that its
    /// own state change left running, so that nothing inside still has a streaming thread when
    /// the last reference goes: disposing a bin removes its children's pads, and a pad whose
    /// task still runs is joined (`gst_task_join`) until that task ends, which a task waiting
    /// for data that will never come does not. A bin skips a child whose state is locked, and
    /// webrtcbin 1.22 locks its SCTP elements until its DTLS transport connects, then starts
    /// them from its own thread.
    ///
    /// Returns the names of the elements that were still running after this one had stopped
    /// (stopped now, and logged as a warning); empty when its own state change stopped everything.
    @discardableResult
    package func stopWithEverythingInside() -> [String] {
        stopForRemoval()
        var leftRunning: [String] = []
        for element in descendants where element.currentState != .null {
            leftRunning.append("\(element.name) (\(element.currentState))")
            element.stopForRemoval()
        }
        if !leftRunning.isEmpty {
            BindingLog.warning("\(diagnosticName) left \(leftRunning.joined(separator: ", ")) running when it stopped; stopped now", about: raw)
        }
        return leftRunning
    }
}
