import BLEBytes

/// Bytes of UTF-8 text built without `String` temporaries: the packet list appends millions of
/// short pieces (names, numbers, hex), and String concatenation dominated its profile.
///
/// A class over raw storage rather than a `[UInt8]`: every append is a capacity compare and a
/// copy, with no uniqueness check or generic `append(contentsOf:)` in between.
public final class TextBuffer {
    private var start: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    public private(set) var count = 0

    public init(capacity: Int = 256) {
        self.capacity = max(16, capacity)
        start = .allocate(capacity: self.capacity)
    }

    deinit { start.deallocate() }

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

    /// Sets the byte at `index` (< count).
    public subscript(index: Int) -> UInt8 {
        get { bytes[index] }
        set { precondition(index >= 0 && index < count); start[index] = newValue }
    }

    /// Slides `n` spaces in at `index`, moving what follows.
    public func insertSpaces(_ n: Int, at index: Int) {
        guard n > 0 else { return }
        precondition(index >= 0 && index <= count)
        reserve(n)
        (start + index + n).update(from: start + index, count: count - index)   // overlapping: memmove
        (start + index).update(repeating: 0x20, count: n)
        count &+= n   // safe: reserved
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

    public func decimal(_ v: UInt64) {
        if v < 10 { byte(0x30 &+ UInt8(v)); return }   // safe: v < 10
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = 0
        var x = v
        withUnsafeMutableBytes(of: &digits) { d in
            while x > 0 { d[n] = 0x30 &+ UInt8(x % 10); x /= 10; n &+= 1 }   // safe: at most 20 digits
            for i in stride(from: n - 1, through: 0, by: -1) { byte(d[i]) }
        }
    }

    public func decimal(_ v: Int64) {
        if v < 0 { byte(0x2D) }
        decimal(v.magnitude)
    }

    public func decimal(_ v: Int) { decimal(Int64(v)) }

    /// `width` lowercase hex digits, zero-padded (more when the value needs them).
    public func hex(_ v: UInt64, width: Int) {
        var n = 1
        while n < 16, v >> UInt64(4 * n) != 0 { n &+= 1 }   // safe: n ≤ 16
        let total = max(n, width)
        for i in stride(from: total - 1, through: 0, by: -1) {
            byte(Self.digit(UInt8(truncatingIfNeeded: v >> UInt64(4 * i)) & 0xF))
        }
    }

    /// `0a 03 00` (or without spaces).
    public func hexBytes<C: Collection>(_ data: C, spaced: Bool = true) where C.Element == UInt8 {
        var first = true
        for b in data {
            if spaced && !first { byte(0x20) }
            first = false
            byte(Self.digit(b >> 4))
            byte(Self.digit(b & 0x0F))
        }
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
