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
    public static func pad<T: BinaryInteger>(_ value: T, _ width: Int) -> String {
        let s = String(value, radix: 16)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    /// Parses `"0a 03 00"`, `"0a0300"` or `"0a:03:00"`; nil on any non-hex character or odd digit count.
    public static func bytes(_ text: String) -> [UInt8]? {
        var out: [UInt8] = []
        var high: UInt8? = nil
        for c in text.utf8 {
            let v: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): v = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): v = c - UInt8(ascii: "A") + 10
            case UInt8(ascii: " "), UInt8(ascii: ":"), UInt8(ascii: "\n"), UInt8(ascii: "\t"), UInt8(ascii: "-"): continue
            default: return nil
            }
            if let h = high { out.append(h << 4 | v); high = nil } else { high = v }
        }
        return high == nil ? out : nil
    }
}
