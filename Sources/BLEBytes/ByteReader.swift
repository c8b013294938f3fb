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

    /// Skips `count` bytes (the checks and errors of `slice`, without making the sub-reader: called,
    /// `slice` was ~40 instructions per fixed-size ATT PDU).
    @inlinable @inline(__always)
    public mutating func skip(_ count: Int, _ field: StaticString) throws(DecodeError) {
        guard count >= 0 else {
            throw DecodeError(kind: .invalidValue(UInt64(truncatingIfNeeded: count)), offset: absoluteOffset, field: field)
        }
        try need(count, field)
        cursor &+= count   // safe: checked by need
    }

    /// Moves the cursor to the end: `rest()` without the sub-reader.
    @inlinable @inline(__always)
    public mutating func skipRest() {
        cursor = bytes.count
    }

    // MARK: peek (relative to the cursor, does not move it) and get (absolute index, does not move it).
    // swift-nio's verbs (`peekInteger`, `getInteger(at:)`): nil when the bytes are not there, never a trap.

    /// The byte `offset` bytes after the cursor; nil past the end.
    @inlinable
    public func peekU8(at offset: Int = 0) -> UInt8? { offset >= 0 ? getU8(at: position &+ offset) : nil }   // safe: position <= count

    /// The little-endian u16 `offset` bytes after the cursor; nil when fewer than 2 bytes are there.
    @inlinable
    public func peekU16le(at offset: Int = 0) -> UInt16? { offset >= 0 ? getU16le(at: position &+ offset) : nil }   // safe: as above

    /// The little-endian u32 `offset` bytes after the cursor; nil when fewer than 4 bytes are there.
    @inlinable
    public func peekU32le(at offset: Int = 0) -> UInt32? { offset >= 0 ? getU32le(at: position &+ offset) : nil }   // safe: as above

    /// The little-endian u64 `offset` bytes after the cursor; nil when fewer than 8 bytes are there.
    @inlinable
    public func peekU64le(at offset: Int = 0) -> UInt64? { offset >= 0 ? getU64le(at: position &+ offset) : nil }   // safe: as above

    /// The byte at `index` of `bytes` (0 = the reader's first byte, whatever the cursor); nil out of range.
    @inlinable
    public func getU8(at index: Int) -> UInt8? {
        guard index >= 0, index < bytes.count else { return nil }
        return bytes[index]
    }

    /// The integer of `T`'s width at `index` of `bytes`, little- or big-endian; nil when fewer bytes are there.
    /// Every fixed-width `get…(at:)` is this one read.
    @inlinable
    func getInteger<T: FixedWidthInteger>(at index: Int, _: T.Type, bigEndian: Bool = false) -> T? {
        guard index >= 0, index <= bytes.count &- MemoryLayout<T>.size else { return nil }   // safe: count >= 0
        let raw = bytes.loadUnaligned(fromByteOffset: index, as: T.self)
        return bigEndian ? T(bigEndian: raw) : T(littleEndian: raw)
    }

    /// The little-endian u16 at `index` of `bytes`; nil when fewer than 2 bytes are there.
    @inlinable public func getU16le(at index: Int) -> UInt16? { getInteger(at: index, UInt16.self) }
    /// The big-endian u16 at `index` of `bytes`; nil when fewer than 2 bytes are there.
    @inlinable public func getU16be(at index: Int) -> UInt16? { getInteger(at: index, UInt16.self, bigEndian: true) }
    /// The little-endian u32 at `index` of `bytes`; nil when fewer than 4 bytes are there.
    @inlinable public func getU32le(at index: Int) -> UInt32? { getInteger(at: index, UInt32.self) }
    /// The big-endian u32 at `index` of `bytes`; nil when fewer than 4 bytes are there.
    @inlinable public func getU32be(at index: Int) -> UInt32? { getInteger(at: index, UInt32.self, bigEndian: true) }
    /// The little-endian u64 at `index` of `bytes`; nil when fewer than 8 bytes are there.
    @inlinable public func getU64le(at index: Int) -> UInt64? { getInteger(at: index, UInt64.self) }

    /// The little-endian u24 at `index` of `bytes`; nil when fewer than 3 bytes are there.
    @inlinable
    public func getU24le(at index: Int) -> UInt32? {
        guard let low = getU16le(at: index), let high = getU8(at: index &+ 2) else { return nil }   // safe: index >= 0 when low exists
        return UInt32(low) | UInt32(high) << 16
    }

    /// The little-endian u48 at `index` of `bytes` (a BD_ADDR's value); nil when fewer than 6 bytes are there.
    @inlinable
    public func getU48le(at index: Int) -> UInt64? {
        guard index >= 0, index <= bytes.count &- 6 else { return nil }   // safe: count >= 0
        var v: UInt64 = 0
        for k in 0 ..< 6 { v |= UInt64(bytes[index &+ k]) << UInt64(8 &* k) }   // safe: checked, k < 6
        return v
    }

    /// A reader over `count` bytes from `index` of `bytes`, its cursor at their start; nil out of range.
    @inlinable
    public func getSlice(at index: Int, count: Int) -> ByteReader? {
        guard index >= 0, count >= 0, index <= bytes.count, count <= bytes.count &- index else { return nil }   // safe: index <= count
        return ByteReader(UnsafeRawBufferPointer(rebasing: bytes[index ..< index &+ count]), base: base &+ index)   // safe: checked
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

// MARK: readers over arrays

extension Array where Element == UInt8 {
    /// Runs `body` with a reader over the array's bytes (`base` is the file offset of element 0), so a
    /// call site reads fields instead of indexing. The reader must not escape `body`.
    @inlinable
    public func withReader<R, E: Error>(base: Int = 0, _ body: (inout ByteReader) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = withUnsafeBytes { raw in
            var r = ByteReader(raw, base: base)
            do throws(E) { return .success(try body(&r)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}

extension ArraySlice where Element == UInt8 {
    /// Runs `body` with a reader over the slice's bytes (`base` is the file offset of its first
    /// element), so a call site reads fields instead of indexing. The reader must not escape `body`.
    @inlinable
    public func withReader<R, E: Error>(base: Int = 0, _ body: (inout ByteReader) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = withUnsafeBytes { raw in
            var r = ByteReader(raw, base: base)
            do throws(E) { return .success(try body(&r)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}

extension UnsafeRawBufferPointer {
    /// A reader over these bytes: `payload.reader.getU16le(at: 0)` instead of `UInt16(p[0]) | UInt16(p[1]) << 8`.
    @inlinable public var reader: ByteReader { ByteReader(self) }
}
