import BLEBytes

/// Bytes of UTF-8 text built without `String` temporaries: the packet list appends millions of
/// short pieces (names, numbers, hex), and String concatenation dominated its profile.
public struct TextBuffer {
    public var bytes: [UInt8] = []

    public init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    public var count: Int { bytes.count }
    public var string: String { String(decoding: bytes, as: UTF8.self) }
    public mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    @inline(__always) public mutating func append(_ s: StaticString) {
        s.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    @inline(__always) public mutating func append(_ s: String) {
        var s = s
        s.withUTF8 { bytes.append(contentsOf: $0) }
    }

    @inline(__always) public mutating func byte(_ b: UInt8) { bytes.append(b) }
    @inline(__always) public mutating func newline() { bytes.append(0x0A) }

    public mutating func spaces(_ n: Int) {
        guard n > 0 else { return }
        bytes.append(contentsOf: repeatElement(0x20, count: n))
    }

    public mutating func decimal(_ v: UInt64) {
        if v < 10 { bytes.append(0x30 &+ UInt8(v)); return }   // safe: v < 10
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = 0
        var x = v
        withUnsafeMutableBytes(of: &digits) { d in
            while x > 0 { d[n] = 0x30 &+ UInt8(x % 10); x /= 10; n &+= 1 }   // safe: at most 20 digits
            for i in stride(from: n - 1, through: 0, by: -1) { bytes.append(d[i]) }
        }
    }

    public mutating func decimal(_ v: Int64) {
        if v < 0 { bytes.append(0x2D) }
        decimal(v.magnitude)
    }

    public mutating func decimal(_ v: Int) { decimal(Int64(v)) }

    /// `width` lowercase hex digits, zero-padded (more when the value needs them).
    public mutating func hex(_ v: UInt64, width: Int) {
        var n = 1
        while n < 16, v >> UInt64(4 * n) != 0 { n &+= 1 }   // safe: n ≤ 16
        let total = max(n, width)
        for i in stride(from: total - 1, through: 0, by: -1) {
            bytes.append(Self.digit(UInt8(truncatingIfNeeded: v >> UInt64(4 * i)) & 0xF))
        }
    }

    /// `0a 03 00` (or without spaces).
    public mutating func hexBytes<C: Collection>(_ data: C, spaced: Bool = true) where C.Element == UInt8 {
        var first = true
        for b in data {
            if spaced && !first { bytes.append(0x20) }
            first = false
            bytes.append(Self.digit(b >> 4))
            bytes.append(Self.digit(b & 0x0F))
        }
    }

    /// Two decimals: `30.00`.
    public mutating func fixed2(_ v: Double) {
        let hundredths = Int64((v * 100).rounded())
        if hundredths < 0 { bytes.append(0x2D) }
        let m = hundredths.magnitude
        decimal(m / 100)
        bytes.append(0x2E)
        let frac = m % 100
        if frac < 10 { bytes.append(0x30) }
        decimal(frac)
    }

    /// Lowercase hex digit of a nibble (arithmetic, not a table: a global is a lazy-init check per use).
    @inline(__always) static func digit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 &+ nibble : 0x57 &+ nibble }
    /// Uppercase hex digit of a nibble.
    @inline(__always) static func upperDigit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 &+ nibble : 0x37 &+ nibble }
}
