/// A small map keyed by an attribute handle, for per-connection state touched on every
/// notification: a linear scan over a few entries, with the last hit cached, is much cheaper
/// than hashing (connections carry a handful of streams). Keeps insertion order.
public struct HandleMap<Value: Sendable>: Sendable {
    public private(set) var keys: [UInt16] = []
    public private(set) var values: [Value] = []
    private var last = 0

    public init() {}

    public var count: Int { keys.count }
    public var isEmpty: Bool { keys.isEmpty }

    @inline(__always)
    func index(_ key: UInt16) -> Int? {
        if last < keys.count, keys[last] == key { return last }
        return keys.firstIndex(of: key)
    }

    public subscript(key: UInt16) -> Value? {
        get { index(key).map { values[$0] } }
        set {
            if let i = index(key) {
                if let newValue { values[i] = newValue; last = i } else {
                    keys.remove(at: i)
                    values.remove(at: i)
                    last = 0
                }
            } else if let newValue {
                keys.append(key)
                values.append(newValue)
                last = keys.count - 1
            }
        }
    }

    /// Updates the value for `key` in place, inserting `initial()` first when absent.
    @inline(__always)
    public mutating func update(_ key: UInt16, initial: () -> Value, _ body: (inout Value) -> Void) {
        if let i = index(key) {
            last = i
            body(&values[i])
        } else {
            keys.append(key)
            values.append(initial())
            last = keys.count - 1
            body(&values[last])
        }
    }
}

/// Per-connection state of a detector, indexed by the connection's `slot`: an array, so the
/// per-event lookup costs no hashing, and it stays as long as the connections held at once (a
/// summarised connection's slot goes to a later one: a value whose owner is not the connection asked
/// about is none).
struct ConnectionState<Value> {
    private var values: [Value?] = []
    /// The index of the connection each value is of.
    private var owners: [Int] = []

    private mutating func grow(to slot: Int) {
        guard slot >= values.count else { return }
        values.append(contentsOf: repeatElement(nil, count: slot - values.count + 1))
        owners.append(contentsOf: repeatElement(0, count: slot - owners.count + 1))
    }

    subscript(_ c: Connection) -> Value? {
        get { c.slot < values.count && owners[c.slot] == c.index ? values[c.slot] : nil }
        set {
            grow(to: c.slot)
            owners[c.slot] = c.index
            values[c.slot] = newValue
        }
    }

    /// Changes the value of `c` in place, made with `initial` first when there is none: one
    /// access instead of a copy out and a store back (a detector's per-packet path).
    mutating func update<R>(_ c: Connection, initial: @autoclosure () -> Value, _ body: (inout Value) -> R) -> R {
        grow(to: c.slot)
        if owners[c.slot] != c.index { owners[c.slot] = c.index; values[c.slot] = nil }
        return values.withUnsafeMutableBufferPointer { all in
            // safe: c.slot < all.count (grown above); the buffer is the array's own, unique storage
            if all[c.slot] == nil { all[c.slot] = initial() }
            return body(&all[c.slot]!)   // safe: set just above
        }
    }

    /// Changes every value in place (`Detector.findingsMoved`).
    mutating func updateAll(_ body: (inout Value) -> Void) {
        for i in values.indices where values[i] != nil { body(&values[i]!) }   // safe: tested non-nil
    }

    /// Changes the value of `c` in place when there is one.
    mutating func updateIfPresent(_ c: Connection, _ body: (inout Value) -> Void) {
        guard c.slot < values.count, owners[c.slot] == c.index, values[c.slot] != nil else { return }
        values.withUnsafeMutableBufferPointer { all in
            body(&all[c.slot]!)   // safe: checked non-nil above
        }
    }
}
