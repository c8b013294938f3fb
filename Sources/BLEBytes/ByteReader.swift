/// A bounds-checked cursor over bytes that belong to someone else (a memory-mapped capture, a libpcap
/// buffer). It never copies: `slice` returns another reader over the same memory.
///
/// Verbs follow swift-nio: `read…` advances, `peek…` does not. Every failure throws a `DecodeError`
/// naming the field and the absolute file offset, so a malformed frame can say where it broke.
/// Use only inside the scope that owns the memory (`withUnsafeBytes`, a `MappedFile` lifetime, a
/// libpcap callback): the reader must not escape it.
public struct ByteReader {
    /// The bytes being read.
    public let bytes: UnsafeRawBufferPointer
    /// File offset of `bytes[0]`: errors and `ByteRange`s report absolute offsets.
    public let base: Int
    /// Invariant: `0...bytes.count`.
    @usableFromInline var cursor: Int
    /// Bytes read so far.
    @inlinable public var position: Int { cursor }

    @inlinable
    public init(_ bytes: UnsafeRawBufferPointer, base: Int = 0) {
        self.bytes = bytes
        self.base = base
        self.cursor = 0
    }

    /// Bytes not yet read.
    @inlinable public var remaining: Int { bytes.count &- position }   // safe: position <= count
    @inlinable public var isAtEnd: Bool { position >= bytes.count }
    /// Absolute file offset of the next byte to read.
    @inlinable public var absoluteOffset: Int { base &+ position }     // safe: offsets fit in Int

    /// The bounds check every read makes: inlined, with the error built out of line so the
    /// common path stays a compare and a branch.
    @inlinable @inline(__always)
    func need(_ n: Int, _ field: StaticString) throws(DecodeError) {
        guard n <= remaining else { throw truncation(n, field) }
    }

    @usableFromInline @inline(never)
    func truncation(_ n: Int, _ field: StaticString) -> DecodeError {
        DecodeError(kind: .truncated(needed: n, available: remaining), offset: base &+ position, field: field)
    }

    @inlinable @inline(__always)
    public mutating func u8(_ field: StaticString) throws(DecodeError) -> UInt8 {
        try need(1, field)
        defer { cursor &+= 1 }   // safe: checked by need
        return bytes[position]
    }

    @inlinable
    public mutating func i8(_ field: StaticString) throws(DecodeError) -> Int8 {
        Int8(bitPattern: try u8(field))
    }

    @inlinable @inline(__always)
    public mutating func u16le(_ field: StaticString) throws(DecodeError) -> UInt16 {
        try need(2, field)
        defer { cursor &+= 2 }   // safe: checked by need
        return UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt16.self))
    }

    @inlinable
    public mutating func u16be(_ field: StaticString) throws(DecodeError) -> UInt16 {
        try need(2, field)
        defer { cursor &+= 2 }   // safe: checked by need
        return UInt16(bigEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt16.self))
    }

    @inlinable
    public mutating func u24le(_ field: StaticString) throws(DecodeError) -> UInt32 {
        try need(3, field)
        defer { cursor &+= 3 }   // safe: checked by need
        return UInt32(bytes[position]) | UInt32(bytes[position &+ 1]) << 8 | UInt32(bytes[position &+ 2]) << 16
    }

    @inlinable
    public mutating func u32le(_ field: StaticString) throws(DecodeError) -> UInt32 {
        try need(4, field)
        defer { cursor &+= 4 }   // safe: checked by need
        return UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt32.self))
    }

    @inlinable
    public mutating func u32be(_ field: StaticString) throws(DecodeError) -> UInt32 {
        try need(4, field)
        defer { cursor &+= 4 }   // safe: checked by need
        return UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt32.self))
    }

    @inlinable
    public mutating func u64le(_ field: StaticString) throws(DecodeError) -> UInt64 {
        try need(8, field)
        defer { cursor &+= 8 }   // safe: checked by need
        return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt64.self))
    }

    @inlinable
    public mutating func u64be(_ field: StaticString) throws(DecodeError) -> UInt64 {
        try need(8, field)
        defer { cursor &+= 8 }   // safe: checked by need
        return UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt64.self))
    }

    /// Reads `count` bytes as a sub-reader over the same memory (no copy).
    @inlinable
    public mutating func slice(_ count: Int, _ field: StaticString) throws(DecodeError) -> ByteReader {
        guard count >= 0 else {
            throw DecodeError(kind: .invalidValue(UInt64(truncatingIfNeeded: count)), offset: absoluteOffset, field: field)
        }
        try need(count, field)
        let sub = UnsafeRawBufferPointer(rebasing: bytes[position ..< position &+ count])
        defer { cursor &+= count }   // safe: checked by need
        return ByteReader(sub, base: base &+ position)
    }

    /// Everything not yet read, as a sub-reader; the cursor moves to the end.
    @inlinable
    public mutating func rest() -> ByteReader {
        let sub = UnsafeRawBufferPointer(rebasing: bytes[position...])
        defer { cursor = bytes.count }
        return ByteReader(sub, base: base &+ position)
    }

    /// Copies `count` bytes out. Use only for what is kept (names, GATT values), never per frame in a hot loop.
    @inlinable
    public mutating func copy(_ count: Int, _ field: StaticString) throws(DecodeError) -> [UInt8] {
        let s = try slice(count, field)
        return Array(s.bytes)
    }

    /// Skips `count` bytes.
    @inlinable
    public mutating func skip(_ count: Int, _ field: StaticString) throws(DecodeError) {
        _ = try slice(count, field)
    }

    @inlinable
    public func peekU8(at offset: Int = 0) -> UInt8? {
        let i = position &+ offset   // safe: small offsets
        guard offset >= 0, i < bytes.count else { return nil }
        return bytes[i]
    }

    /// The unread bytes as a `ByteRange` (file offsets), for keeping a reference without copying.
    @inlinable public var remainingRange: ByteRange { ByteRange(offset: absoluteOffset, count: remaining) }

    /// The unread bytes as a buffer (no copy).
    @inlinable public var remainingBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[position...]) }

    /// Throws when bytes are left over: for fixed-size structures whose length must match exactly.
    @inlinable
    public func expectEnd(_ field: StaticString) throws(DecodeError) {
        guard remaining == 0 else {
            throw DecodeError(kind: .lengthMismatch(declared: position, actual: bytes.count), offset: absoluteOffset, field: field)
        }
    }
}

/// A span of a capture file by absolute offset: how frames and payloads are referenced without copying.
public struct ByteRange: Hashable, Sendable {
    public var offset: Int
    public var count: Int
    @inlinable public init(offset: Int, count: Int) { (self.offset, self.count) = (offset, count) }
}
