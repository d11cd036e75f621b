/// A binary min-heap: O(log n) insert and removal of the smallest, O(1) peek. The ACD's timed
/// transitions wait in one, ordered by (time, deadline); entries are invalidated lazily (the
/// state is the truth, an entry whose deadline no longer exists there is dropped when it reaches
/// the top), so changing or cancelling a deadline costs nothing.
struct DeadlineHeap<Element: Comparable> {
    private(set) var elements: [Element] = []

    init() {}

    var count: Int { elements.count }
    var first: Element? { elements.first }

    mutating func insert(_ element: Element) {
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
    mutating func removeFirst() -> Element? {
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
    mutating func rebuild(_ contents: [Element]) {
        elements = contents
        guard elements.count > 1 else { return }
        for index in stride(from: elements.count / 2 - 1, through: 0, by: -1) { siftDown(from: index) }
    }

    private mutating func siftDown(from start: Int) {
        var parent = start
        let count = elements.count
        while true {
            let left = 2 * parent + 1
            guard left < count else { return }
            let right = left + 1
            var smallest = left
            if right < count, elements[right] < elements[left] { smallest = right }
            guard elements[smallest] < elements[parent] else { return }
            elements.swapAt(smallest, parent)
            parent = smallest
        }
    }
}
