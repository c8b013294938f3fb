import BLEBytes

/// The size rule of an L2CAP signalling / ATT / SMP table row (btmon's `size` + `fixed` columns), checked once by the
/// dispatcher, so a row's decoder can rely on its minimum.
public enum PDUSize: Sendable, Equatable {
    /// The parameters are exactly `n` bytes. More bytes are decoded and reported as trailing bytes
    /// (a warning, STYLE 6.5.5); fewer are malformed.
    case exactly(Int)
    /// The parameters are at least `n` bytes.
    case atLeast(Int)

    /// The minimum number of bytes the rule needs.
    @inlinable public var minimum: Int {
        switch self {
        case let .exactly(n), let .atLeast(n): n
        }
    }

    /// Throws `.truncated` when `r` holds fewer bytes than the rule needs.
    /// - Throws: `DecodeError` naming `field` at the reader's current offset.
    @inlinable
    public func check(_ r: ByteReader, _ field: StaticString) throws(DecodeError) {
        let n = minimum
        guard r.remaining >= n else {
            throw DecodeError(kind: .truncated(needed: n, available: r.remaining), offset: r.absoluteOffset, field: field)
        }
    }

    /// Bytes beyond an `exactly` rule (0 for `atLeast`, or when short).
    @inlinable
    public func trailing(_ remaining: Int) -> Int {
        switch self {
        case let .exactly(n): remaining > n ? remaining &- n : 0   // safe: remaining > n
        case .atLeast: 0
        }
    }
}

/// A 256-slot index over a table of rows keyed by a one-byte code (ATT opcodes, SMP codes, L2CAP
/// signalling codes): built once, O(1) lookup. A duplicate code keeps the first row and is listed in
/// `duplicateCodes` (checked by tests, never a trap).
public struct ByteCodeIndex<Row: Sendable>: Sendable {
    public let rows: [Row]
    @usableFromInline let slots: [Int16]   // index into rows, -1 when empty
    public let duplicateCodes: [UInt8]

    public init(_ rows: [Row], code: (Row) -> UInt8) {
        self.rows = rows
        var slots = [Int16](repeating: -1, count: 256)
        var dups: [UInt8] = []
        for (i, row) in rows.enumerated() {
            let c = Int(code(row))
            if slots[c] >= 0 { dups.append(UInt8(c)) } else { slots[c] = Int16(truncatingIfNeeded: i) }
        }
        self.slots = slots
        self.duplicateCodes = dups
    }

    @inlinable
    public subscript(code: UInt8) -> Row? {
        let i = Int(slots[Int(code)])
        return i >= 0 ? rows[i] : nil
    }
}
