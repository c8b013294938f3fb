import BLEBytes

/// Bytes of UTF-8 text built without `String` temporaries: the packet list appends millions of
/// short pieces (names, numbers, hex), and String concatenation dominated its profile.
///
/// A class over raw storage rather than a `[UInt8]`: every append is a capacity compare and a
/// copy, with no uniqueness check or generic `append(contentsOf:)` in between.
public final class TextBuffer {
    @exclusivity(unchecked) private var start: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) public private(set) var count = 0

    public init(capacity: Int = 256) {
        self.capacity = max(16, capacity)
        start = .allocate(capacity: self.capacity)
    }

    deinit { start.deallocate() }

    /// A buffer of its own with the same text (`JSONWriter` copies its buffer before changing a shared one).
    public func copy() -> TextBuffer {
        let other = TextBuffer(capacity: capacity)
        other.start.update(from: start, count: count)
        other.count = count
        return other
    }

    /// The text so far; valid until the next change.
    public var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: start, count: count) }
    public var string: String { String(decoding: bytes, as: UTF8.self) }
    public func removeAll() { count = 0 }

    @inline(__always) private func reserve(_ n: Int) {
        if count &+ n > capacity { grow(count &+ n) }   // safe: lengths of text
    }

    @inline(never) private func grow(_ needed: Int) {
        let newCapacity = max(needed, capacity * 2)
        let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        bigger.update(from: start, count: count)
        start.deallocate()
        start = bigger
        capacity = newCapacity
    }

    @inline(__always) public func append(_ raw: UnsafeBufferPointer<UInt8>) {
        guard let base = raw.baseAddress, raw.count > 0 else { return }
        reserve(raw.count)
        (start + count).update(from: base, count: raw.count)
        count &+= raw.count   // safe: reserved
    }

    @inline(__always) public func append(_ s: StaticString) {
        s.withUTF8Buffer { append($0) }
    }

    @inline(__always) public func append(_ s: String) {
        // Native strings lend their bytes as they are; only bridged or lazy ones are copied.
        if s.utf8.withContiguousStorageIfAvailable({ append($0) }) != nil { return }
        var s = s
        s.withUTF8 { append($0) }
    }

    @inline(__always) public func append(_ b: [UInt8]) {
        b.withUnsafeBufferPointer { append($0) }
    }

    @inline(__always) public func byte(_ b: UInt8) {
        reserve(1)
        start[count] = b
        count &+= 1   // safe: reserved
    }

    @inline(__always) public func newline() { byte(0x0A) }

    /// Slides `n` spaces in at `index`, moving what follows.
    public func insertSpaces(_ n: Int, at index: Int) {
        guard n > 0 else { return }
        precondition(index >= 0 && index <= count)
        reserve(n)
        (start + index + n).update(from: start + index, count: count - index)   // overlapping: memmove
        (start + index).update(repeating: 0x20, count: n)
        count &+= n   // safe: reserved
    }

    /// Replaces the bytes in `range` with `..` (a name cut to fit a line), moving what follows.
    public func elide(_ range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= count && range.count >= 2)
        start[range.lowerBound] = 0x2E
        start[range.lowerBound + 1] = 0x2E
        let tail = range.lowerBound + 2
        (start + tail).update(from: start + range.upperBound, count: count - range.upperBound)   // overlapping: memmove
        count -= range.count - 2
    }

    /// The byte at `index` (< count).
    public subscript(index: Int) -> UInt8 {
        precondition(index >= 0 && index < count)
        return start[index]
    }

    /// Display columns of the text from `index` on (UTF-8 continuation bytes take none).
    public func columns(from index: Int) -> Int {
        var n = 0
        for i in index ..< count where start[i] & 0xC0 != 0x80 { n &+= 1 }   // safe: bounded by count
        return n
    }

    public func spaces(_ n: Int) {
        guard n > 0 else { return }
        reserve(n)
        (start + count).update(repeating: 0x20, count: n)
        count &+= n   // safe: reserved
    }

    /// `v` in decimal, zero-padded to `width` digits.
    public func decimal(_ v: UInt64, width: Int = 1) {
        if v < 10 && width <= 1 { byte(0x30 &+ UInt8(v)); return }   // safe: v < 10
        var n = 1
        var power: UInt64 = 10
        while n < 20, v >= power { n &+= 1; if n < 20 { power &*= 10 } }   // safe: 10^19 < 2^64
        n = max(n, width)
        reserve(n)
        var x = v
        for i in stride(from: count &+ n &- 1, through: count, by: -1) {   // safe: reserved
            start[i] = 0x30 &+ UInt8(truncatingIfNeeded: x % 10)
            x /= 10
        }
        count &+= n   // safe: reserved
    }

    public func decimal(_ v: Int64) {
        if v < 0 { byte(0x2D) }
        decimal(v.magnitude)
    }

    public func decimal(_ v: Int) { decimal(Int64(v)) }

    /// `width` lowercase hex digits, zero-padded (more when the value needs them).
    public func hex(_ v: UInt64, width: Int) {
        let needed = max(1, (64 &- v.leadingZeroBitCount &+ 3) / 4)   // safe: 0…64
        let total = max(needed, width)
        reserve(total)
        var x = v
        for i in stride(from: count &+ total &- 1, through: count, by: -1) {   // safe: reserved
            start[i] = Self.digit(UInt8(truncatingIfNeeded: x) & 0xF)
            x >>= 4
        }
        count &+= total   // safe: reserved
    }

    /// `0a 03 00` (or without spaces).
    public func hexBytes<C: Collection>(_ data: C, spaced: Bool = true) where C.Element == UInt8 {
        let done: Void? = data.withContiguousStorageIfAvailable { hexBytes($0, spaced: spaced) }
        if done != nil { return }
        var first = true
        for b in data {
            if spaced && !first { byte(0x20) }
            first = false
            byte(Self.digit(b >> 4))
            byte(Self.digit(b & 0x0F))
        }
    }

    /// `hexBytes` for contiguous bytes: one capacity check, then a table load and a store per byte.
    public func hexBytes(_ data: UnsafeBufferPointer<UInt8>, spaced: Bool = true) {
        guard !data.isEmpty else { return }
        let stride = spaced ? 3 : 2
        reserve(data.count &* 3)   // safe: a frame's bytes; room for the space written after every byte
        Self.hexPairs.withUnsafeBufferPointer { pairs in
            var p = UnsafeMutableRawPointer(start + count)
            for b in data {
                p.storeBytes(of: pairs[Int(b)].littleEndian, as: UInt16.self)   // unaligned stores are allowed (SE-0349)
                p.storeBytes(of: 0x20, toByteOffset: 2, as: UInt8.self)   // overwritten or dropped when not spaced
                p += stride
            }
        }
        count &+= data.count &* stride &- (spaced ? 1 : 0)   // safe: reserved; no space after the last byte
    }

    /// The two lowercase hex digits of each byte value, first digit in the low byte.
    private static let hexPairs: [UInt16] = (0 ..< 256).map { b in
        UInt16(digit(UInt8(b >> 4))) | UInt16(digit(UInt8(b & 0xF))) << 8
    }

    /// Two decimals: `30.00`.
    public func fixed2(_ v: Double) {
        let hundredths = Int64((v * 100).rounded())
        if hundredths < 0 { byte(0x2D) }
        let m = hundredths.magnitude
        decimal(m / 100)
        byte(0x2E)
        let frac = m % 100
        if frac < 10 { byte(0x30) }
        decimal(frac)
    }

    /// Lowercase hex digit of a nibble (arithmetic, not a table: a global is a lazy-init check per use).
    @inline(__always) static func digit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 &+ nibble : 0x57 &+ nibble }
    /// Uppercase hex digit of a nibble.
    @inline(__always) static func upperDigit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 &+ nibble : 0x37 &+ nibble }
}
