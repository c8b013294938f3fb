/// A small streaming JSON builder: output is appended as UTF-8 bytes with correct escaping, without
/// Foundation or intermediate dictionaries (one object per frame in `packets --json`, one document of
/// thousands of connections for the report). `output` turns the bytes into a String once.
public struct JSONWriter {
    private var bytes: [UInt8] = []
    private var needsComma: [Bool] = [false]

    public init() {}

    /// The document so far.
    public var output: String { String(decoding: bytes, as: UTF8.self) }

    /// The document so far as UTF-8 bytes, for writing out without making a String (validating a
    /// 7.7 MB report into a String cost ~2 % of the 1M-frame writes bench).
    public var utf8: [UInt8] { bytes }

    /// Hands the bytes written so far to `sink` and forgets them, once there are more than
    /// `threshold`: a long document goes out in pieces through one reused buffer instead of growing
    /// an array of its whole size (whose page faults cost ~5 % of the 1M-frame writes bench).
    public mutating func drain(ifOver threshold: Int, to sink: (UnsafeBufferPointer<UInt8>) -> Void) {
        guard bytes.count > threshold else { return }
        bytes.withUnsafeBufferPointer(sink)
        bytes.removeAll(keepingCapacity: true)
    }

    @inline(__always) private mutating func put(_ s: StaticString) {
        s.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    @inline(__always) private mutating func put(_ s: String) {
        var s = s
        s.withUTF8 { bytes.append(contentsOf: $0) }
    }

    /// Decimal digits of an integer, without a String in between.
    private mutating func putInteger<T: BinaryInteger>(_ v: T) {
        guard let wide = Int64(exactly: v) else { put(String(v)); return }
        if wide < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = wide.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)   // 24 bytes: room for the 20 digits of a UInt64
        withUnsafeMutableBytes(of: &digits) { buffer in
            var i = buffer.count
            repeat {
                i -= 1
                buffer[i] = UInt8(ascii: "0") &+ UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[i...]))
        }
    }

    private mutating func separator() {
        if needsComma[needsComma.count - 1] { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
    }

    private mutating func key(_ k: String?) {
        separator()
        if let k { Self.appendString(k, to: &bytes); bytes.append(UInt8(ascii: ":")) }
    }

    public mutating func beginObject(_ k: String? = nil) { key(k); bytes.append(UInt8(ascii: "{")); needsComma.append(false) }
    public mutating func endObject() { needsComma.removeLast(); bytes.append(UInt8(ascii: "}")) }
    public mutating func beginArray(_ k: String? = nil) { key(k); bytes.append(UInt8(ascii: "[")); needsComma.append(false) }
    public mutating func endArray() { needsComma.removeLast(); bytes.append(UInt8(ascii: "]")) }

    public mutating func string(_ k: String?, _ v: String) { key(k); Self.appendString(v, to: &bytes) }
    public mutating func int<T: BinaryInteger>(_ k: String?, _ v: T) { key(k); putInteger(v) }
    public mutating func double(_ k: String?, _ v: Double) {
        key(k)
        if v.isFinite { put(String(v)) } else { put("null") }
    }
    public mutating func bool(_ k: String?, _ v: Bool) { key(k); if v { put("true") } else { put("false") } }
    public mutating func null(_ k: String?) { key(k); put("null") }
    public mutating func optional<T: BinaryInteger>(_ k: String?, _ v: T?) {
        if let v { int(k, v) } else { null(k) }
    }
    public mutating func optional(_ k: String?, _ v: String?) {
        if let v { string(k, v) } else { null(k) }
    }
    /// Inserts already-encoded JSON.
    public mutating func raw(_ k: String?, _ json: String) { key(k); put(json) }

    /// `s` as a JSON string (RFC 8259 section 7): quotes, backslashes and control characters escaped,
    /// runs that need no escape copied whole.
    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    static func appendString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { utf8 in
            guard let base = utf8.baseAddress else { return }
            var runStart = 0
            var i = 0
            while i < utf8.count {
                // Eight bytes at a time while none of them needs an escape (most text needs none).
                if i + 8 <= utf8.count, !mayNeedEscape(UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)) {
                    i += 8
                    continue
                }
                let byte = utf8[i]
                i += 1
                if byte >= 0x20 && byte != 0x22 && byte != 0x5C { continue }
                let at = i - 1
                if runStart != at { out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart ..< at])) }
                switch byte {
                case 0x22: out.append(contentsOf: [0x5C, 0x22])
                case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                default:
                    out.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
                }
                runStart = at + 1
            }
            if runStart < utf8.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Some byte of the eight in `w` is a control character (< 0x20), `"` or `\\` — or, rarely, a
    /// false alarm next to one, which the byte-wise check then settles. Never a false "no": a byte
    /// below n makes `(b - n) & ~b` set its top bit (the "haszero"/"hasless" bit tricks).
    @inline(__always) static func mayNeedEscape(_ w: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, high: UInt64 = 0x8080_8080_8080_8080
        let control = (w &- ones &* 0x20) & ~w & high
        let q = w ^ (ones &* 0x22), quote = (q &- ones) & ~q & high
        let b = w ^ (ones &* 0x5C), backslash = (b &- ones) & ~b & high
        return control | quote | backslash != 0
    }
}
