/// A binary min-heap: O(log n) insert and removal of the smallest, O(1) peek. Deadlines wait in
/// one (the ACD's timed transitions, the service's connection deadlines); their owners invalidate
/// entries lazily (an entry no longer scheduled is skipped when it reaches the top), so changing
/// or cancelling a deadline costs nothing.
///
/// A general utility beside `Locked` and `MainLoop`, kept in this target because every target
/// that needs it already stands on it.
package struct MinHeap<Element: Comparable> {
    package private(set) var elements: [Element] = []

    package init() {}

    package var count: Int { elements.count }
    package var first: Element? { elements.first }

    package mutating func insert(_ element: Element) {
        elements.append(element)
        var child = elements.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard elements[child] < elements[parent] else { break }
            elements.swapAt(child, parent)
            child = parent
        }
    }

    @discardableResult
    package mutating func removeFirst() -> Element? {
        guard !elements.isEmpty else { return nil }
        let first = elements[0]
        let last = elements.removeLast()
        if !elements.isEmpty {
            elements[0] = last
            siftDown(from: 0)
        }
        return first
    }

    /// Replaces the contents (O(n) heapify).
    package mutating func rebuild(_ contents: [Element]) {
        elements = contents
        heapify()
    }

    /// Keeps only the elements `isIncluded` accepts (O(n) heapify).
    package mutating func filter(_ isIncluded: (Element) -> Bool) {
        elements.removeAll { !isIncluded($0) }
        heapify()
    }

    package mutating func removeAll() { elements.removeAll() }

    private mutating func heapify() {
        guard elements.count > 1 else { return }
        for index in stride(from: elements.count / 2 - 1, through: 0, by: -1) { siftDown(from: index) }
    }

    private mutating func siftDown(from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < elements.count else { return }
            var smallest = left
            if left + 1 < elements.count, elements[left + 1] < elements[left] { smallest = left + 1 }
            guard elements[smallest] < elements[parent] else { return }
            elements.swapAt(smallest, parent)
            parent = smallest
        }
    }
}

extension MinHeap: Sendable where Element: Sendable {}
