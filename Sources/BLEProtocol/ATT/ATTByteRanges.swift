import BLEBytes

// Typed decoders keep values as `ByteRange`s (absolute file offsets) instead of copying: these
// helpers take ranges off a reader and turn them back into bytes when something must be kept.

extension ByteReader {
    /// Reads `count` bytes as a `ByteRange` (no copy).
    /// - Throws: `.truncated` when fewer bytes remain.
    @inlinable
    mutating func takeRange(_ count: Int, _ field: StaticString) throws(DecodeError) -> ByteRange {
        let start = absoluteOffset
        try skip(count, field)
        return ByteRange(offset: start, count: count)
    }

    /// Everything not yet read as a `ByteRange`; the cursor moves to the end.
    @inlinable
    mutating func takeRest() -> ByteRange {
        let range = remainingRange
        _ = rest()
        return range
    }

    /// A reader over `range` when this reader's bytes contain it (any reader whose `base` is the
    /// file offset of its first byte: a frame, a reassembled PDU, the whole mapped file); nil otherwise.
    public func reader(for range: ByteRange) -> ByteReader? {
        guard range.count >= 0, range.offset >= base else { return nil }
        let start = range.offset &- base                 // safe: offset >= base
        guard start <= bytes.count, range.count <= bytes.count &- start else { return nil }   // safe: start <= count
        return ByteReader(UnsafeRawBufferPointer(rebasing: bytes[start ..< start &+ range.count]), base: range.offset)
    }

    /// Copies the bytes of `range` (see `reader(for:)`); nil when this reader does not hold them.
    /// Use for what is kept (GATT values, names), not per frame.
    public func copyBytes(_ range: ByteRange) -> [UInt8]? {
        reader(for: range).map { Array($0.bytes) }
    }
}
