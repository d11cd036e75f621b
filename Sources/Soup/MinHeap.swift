/// A binary min-heap: O(log n) insert and removal of the smallest, O(1) peek. The connection
/// deadlines wait in one; cancelled entries stay until they surface and are skipped then, so
/// cancelling costs nothing.
struct MinHeap<Element: Comparable> {
    private(set) var elements: [Element] = []

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

    /// Keeps only the elements `isIncluded` accepts (O(n) heapify).
    mutating func filter(_ isIncluded: (Element) -> Bool) {
        elements.removeAll { !isIncluded($0) }
        guard elements.count > 1 else { return }
        for index in stride(from: elements.count / 2 - 1, through: 0, by: -1) { siftDown(from: index) }
    }

    mutating func removeAll() { elements.removeAll() }

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
