/// A sorted set of unique keys with order statistics: insert, remove, rank, select, successor,
/// all O(log n) expected. The ACD keeps its queues, its free agents and the times its agents
/// become free in these, so no request has to scan or sort every call or agent.
///
/// A treap (a binary search tree whose nodes also form a heap on random priorities) stored in an
/// array: nodes are indices, freed slots are reused. Priorities come from a fixed-seed generator,
/// so the shape, and therefore the cost, is reproducible; the order never depends on them.
struct OrderedIndex<Key: Comparable> {
    private struct Node {
        var key: Key?
        var left = -1
        var right = -1
        var size = 1
        var priority: UInt64
    }

    private var nodes: [Node] = []
    private var freeSlots: [Int] = []
    private var root = -1
    private var seed: UInt64 = 0x9E37_79B9_7F4A_7C15

    init() {}

    var count: Int { size(root) }
    var isEmpty: Bool { root < 0 }

    /// The smallest key.
    var first: Key? {
        var node = root
        guard node >= 0 else { return nil }
        while nodes[node].left >= 0 { node = nodes[node].left }
        return nodes[node].key
    }

    /// Whether `key` is in the set.
    func contains(_ key: Key) -> Bool {
        var node = root
        while node >= 0 {
            let current = nodes[node].key!
            if key == current { return true }
            node = key < current ? nodes[node].left : nodes[node].right
        }
        return false
    }

    /// How many keys are smaller than `key` (its 0-based place when it is in the set).
    func rank(of key: Key) -> Int {
        countPrefix { $0 < key }
    }

    /// How many keys, from the smallest on, satisfy `predicate`; it must hold for a prefix of the
    /// sorted keys and for no key after the first that fails it (true, …, true, false, …, false).
    func countPrefix(_ predicate: (Key) -> Bool) -> Int {
        var node = root, counted = 0
        while node >= 0 {
            if predicate(nodes[node].key!) {
                counted += size(nodes[node].left) + 1
                node = nodes[node].right
            } else {
                node = nodes[node].left
            }
        }
        return counted
    }

    /// The key at 0-based place `index` in sorted order.
    func select(_ index: Int) -> Key? {
        guard index >= 0, index < count else { return nil }
        var node = root, remaining = index
        while node >= 0 {
            let leftSize = size(nodes[node].left)
            if remaining < leftSize {
                node = nodes[node].left
            } else if remaining == leftSize {
                return nodes[node].key
            } else {
                remaining -= leftSize + 1
                node = nodes[node].right
            }
        }
        return nil
    }

    /// The smallest key greater than `key` (which need not be in the set).
    func successor(of key: Key) -> Key? {
        var node = root
        var best: Key?
        while node >= 0 {
            let current = nodes[node].key!
            if key < current {
                best = current
                node = nodes[node].left
            } else {
                node = nodes[node].right
            }
        }
        return best
    }

    /// Every key in order (for checks and rebuilds; O(n)).
    var sorted: [Key] {
        var result: [Key] = []
        result.reserveCapacity(count)
        var stack: [Int] = []
        var node = root
        while node >= 0 || !stack.isEmpty {
            while node >= 0 {
                stack.append(node)
                node = nodes[node].left
            }
            node = stack.removeLast()
            result.append(nodes[node].key!)
            node = nodes[node].right
        }
        return result
    }

    /// Adds `key`; false when it was already there.
    @discardableResult
    mutating func insert(_ key: Key) -> Bool {
        guard !contains(key) else { return false }
        let (smaller, larger) = split(root, before: key)
        let node = allocate(key)
        root = merge(merge(smaller, node), larger)
        return true
    }

    /// Removes `key`; false when it was not there.
    @discardableResult
    mutating func remove(_ key: Key) -> Bool {
        guard contains(key) else { return false }
        let (smaller, rest) = split(root, before: key)
        let (match, larger) = split(rest, atOrBefore: key)
        release(match)
        root = merge(smaller, larger)
        return true
    }

    mutating func removeAll() {
        nodes.removeAll(keepingCapacity: true)
        freeSlots.removeAll(keepingCapacity: true)
        root = -1
    }

    // MARK: Treap plumbing

    private func size(_ node: Int) -> Int { node < 0 ? 0 : nodes[node].size }

    private mutating func update(_ node: Int) {
        nodes[node].size = size(nodes[node].left) + size(nodes[node].right) + 1
    }

    private mutating func nextPriority() -> UInt64 {
        // xorshift64*: a fixed sequence, good enough to keep the tree balanced.
        seed ^= seed >> 12
        seed ^= seed << 25
        seed ^= seed >> 27
        return seed &* 0x2545_F491_4F6C_DD1D
    }

    private mutating func allocate(_ key: Key) -> Int {
        let node = Node(key: key, priority: nextPriority())
        if let slot = freeSlots.popLast() {
            nodes[slot] = node
            return slot
        }
        nodes.append(node)
        return nodes.count - 1
    }

    private mutating func release(_ node: Int) {
        guard node >= 0 else { return }
        nodes[node].key = nil // drops the key's storage now, not when the slot is reused
        freeSlots.append(node)
    }

    /// Splits `node` into the keys smaller than `key` and the rest.
    private mutating func split(_ node: Int, before key: Key) -> (Int, Int) {
        guard node >= 0 else { return (-1, -1) }
        if nodes[node].key! < key {
            let (smaller, larger) = split(nodes[node].right, before: key)
            nodes[node].right = smaller
            update(node)
            return (node, larger)
        } else {
            let (smaller, larger) = split(nodes[node].left, before: key)
            nodes[node].left = larger
            update(node)
            return (smaller, node)
        }
    }

    /// Splits `node` into the keys up to and including `key` and the rest.
    private mutating func split(_ node: Int, atOrBefore key: Key) -> (Int, Int) {
        guard node >= 0 else { return (-1, -1) }
        if !(key < nodes[node].key!) {
            let (smaller, larger) = split(nodes[node].right, atOrBefore: key)
            nodes[node].right = smaller
            update(node)
            return (node, larger)
        } else {
            let (smaller, larger) = split(nodes[node].left, atOrBefore: key)
            nodes[node].left = larger
            update(node)
            return (smaller, node)
        }
    }

    /// Joins two treaps where every key of `left` is smaller than every key of `right`.
    private mutating func merge(_ left: Int, _ right: Int) -> Int {
        if left < 0 { return right }
        if right < 0 { return left }
        if nodes[left].priority > nodes[right].priority {
            nodes[left].right = merge(nodes[left].right, right)
            update(left)
            return left
        } else {
            nodes[right].left = merge(left, nodes[right].left)
            update(right)
            return right
        }
    }
}
