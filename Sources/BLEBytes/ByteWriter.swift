/// Appends integers and bytes to a growing buffer: for capture writers (tests, redact, export).
public struct ByteWriter: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    public mutating func u8(_ v: UInt8) { bytes.append(v) }
    public mutating func u16le(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    public mutating func u16be(_ v: UInt16) { withUnsafeBytes(of: v.bigEndian) { bytes.append(contentsOf: $0) } }
    public mutating func u32le(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    public mutating func u32be(_ v: UInt32) { withUnsafeBytes(of: v.bigEndian) { bytes.append(contentsOf: $0) } }
    public mutating func u64be(_ v: UInt64) { withUnsafeBytes(of: v.bigEndian) { bytes.append(contentsOf: $0) } }
    public mutating func u64le(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    public mutating func append<C: Collection>(_ data: C) where C.Element == UInt8 { bytes.append(contentsOf: data) }
}

extension Array where Element == UInt8 {
    /// Overwrites the little-endian u16 at `index` (a field rewritten in place: a handle, a length);
    /// does nothing when the array is too short, so wire-derived offsets cannot trap.
    public mutating func setU16le(_ value: UInt16, at index: Int) {
        guard index >= 0, index <= count &- 2 else { return }   // safe: count >= 0
        self[index] = UInt8(truncatingIfNeeded: value)
        self[index &+ 1] = UInt8(truncatingIfNeeded: value >> 8)   // safe: checked
    }

    /// Overwrites the little-endian u48 at `index` (a BD_ADDR); does nothing when the array is too short.
    public mutating func setU48le(_ value: UInt64, at index: Int) {
        guard index >= 0, index <= count &- 6 else { return }   // safe: count >= 0
        for k in 0 ..< 6 { self[index &+ k] = UInt8(truncatingIfNeeded: value >> UInt64(8 &* k)) }   // safe: checked, k < 6
    }
}
