/// Hex formatting and parsing helpers (for output and for test vectors).
public enum Hex {
    @usableFromInline static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// `"0a 03 00"` style, or without separator when `separator` is empty.
    public static func string<C: Collection>(_ bytes: C, separator: String = " ") -> String where C.Element == UInt8 {
        var out = String()
        out.reserveCapacity(bytes.count * (2 + separator.utf8.count))
        var first = true
        for b in bytes {
            if !first { out += separator }
            first = false
            out.unicodeScalars.append(Unicode.Scalar(digits[Int(b >> 4)]))
            out.unicodeScalars.append(Unicode.Scalar(digits[Int(b & 0x0F)]))
        }
        return out
    }

    /// Zero-padded lowercase hex of `value` with `width` digits: `Hex.pad(0x2a, 4)` → `"002a"`.
    /// More digits when the value needs them; a negative value keeps its sign (`"-2a"`).
    public static func pad<T: BinaryInteger>(_ value: T, _ width: Int, uppercase: Bool = false) -> String {
        format(value, width, prefix: false, uppercase: uppercase)
    }

    /// `"0x002a"`: `pad` with the `0x` prefix, made in one go (layer codes are formatted per frame).
    public static func code<T: BinaryInteger>(_ value: T, _ width: Int, uppercase: Bool = false) -> String {
        format(value, width, prefix: true, uppercase: uppercase)
    }

    private static func format<T: BinaryInteger>(_ value: T, _ width: Int, prefix: Bool, uppercase: Bool) -> String {
        guard value >= 0, value.bitWidth <= 64 || value <= T(UInt64.max) else {   // rare: String's own digits
            let s = String(value, radix: 16, uppercase: uppercase)
            return (prefix ? "0x" : "") + (s.count >= width ? s : String(repeating: "0", count: width - s.count) + s)
        }
        let v = UInt64(value)
        let needed = max(1, (64 - v.leadingZeroBitCount + 3) / 4)
        let digits = max(width, needed)
        let count = digits + (prefix ? 2 : 0)
        let letterBase: UInt8 = uppercase ? 0x37 : 0x57   // 10 + base = "A" or "a"
        // Small strings (up to 15 bytes, every code and handle) are made without allocating.
        return String(unsafeUninitializedCapacity: count) { buffer in
            var rest = v
            for i in stride(from: count - 1, through: count - digits, by: -1) {
                let d = UInt8(truncatingIfNeeded: rest & 0xF)
                buffer[i] = d < 10 ? 0x30 &+ d : letterBase &+ d
                rest >>= 4
            }
            if prefix { buffer[0] = 0x30; buffer[1] = 0x78 }
            return count
        }
    }

    /// Parses `"0a 03 00"`, `"0a0300"` or `"0a:03:00"`; nil on any non-hex character or odd digit count.
    public static func bytes(_ text: String) -> [UInt8]? {
        var out: [UInt8] = []
        var high: UInt8? = nil
        for c in text.utf8 {
            guard let v = digit(c) else {
                switch c {
                case UInt8(ascii: " "), UInt8(ascii: ":"), UInt8(ascii: "\n"), UInt8(ascii: "\t"), UInt8(ascii: "-"): continue
                default: return nil
                }
            }
            if let h = high { out.append(h << 4 | v); high = nil } else { high = v }
        }
        return high == nil ? out : nil
    }

    /// A hex digit's value (`0-9`, `a-f`, `A-F`), nil for any other character.
    @inlinable
    public static func digit(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
