/// A small streaming JSON builder: output is appended as UTF-8 bytes with correct escaping, without
/// Foundation or intermediate dictionaries (one object per frame in `packets --json`, one document of
/// thousands of connections for the report). `output` turns the bytes into a String once.
public struct JSONWriter {
    /// The document's bytes in a `TextBuffer` (a capacity compare and a copy per piece: through
    /// `[UInt8]`, the uniqueness check and generic `append(contentsOf:)` cost ~90 instructions a piece,
    /// and the report writes ~130 pieces per connection). Copied before a change when shared, so a
    /// copy of the writer stays a value.
    private var buffer = TextBuffer(capacity: 256)
    /// Whether the innermost object or array has a member already (a comma goes before the next),
    /// and the same for the enclosing ones.
    private var needsComma = false
    private var outerNeedsComma: [Bool] = []

    public init() {}

    /// The buffer, unshared, to append to.
    private var out: TextBuffer {
        mutating get {
            if !isKnownUniquelyReferenced(&buffer) { buffer = buffer.copy() }
            return buffer
        }
    }

    /// The document so far.
    public var output: String { buffer.string }

    /// The document so far as UTF-8 bytes, for writing out without making a String (validating a
    /// 7.7 MB report into a String cost ~2 % of the 1M-frame writes bench).
    public var utf8: [UInt8] { Array(buffer.bytes) }

    /// Hands the bytes written so far to `sink` and forgets them, once there are more than
    /// `threshold`: a long document goes out in pieces through one reused buffer instead of growing
    /// an array of its whole size (whose page faults cost ~5 % of the 1M-frame writes bench).
    public mutating func drain(ifOver threshold: Int, to sink: (UnsafeBufferPointer<UInt8>) -> Void) {
        guard buffer.count > threshold else { return }
        let out = self.out
        sink(out.bytes)
        out.removeAll()
    }

    @inline(__always) private mutating func put(_ s: StaticString) { out.append(s) }

    @inline(__always) private mutating func put(_ s: String) { out.append(s) }

    /// Decimal digits of an integer, without a String in between.
    private mutating func putInteger<T: BinaryInteger>(_ v: T) {
        guard let wide = Int64(exactly: v) else { put(String(v)); return }
        out.decimal(wide)
    }

    private mutating func separator() {
        if needsComma { out.byte(UInt8(ascii: ",")) }
        needsComma = true
    }

    private mutating func key(_ k: JSONKey?) {
        separator()
        guard let k else { return }
        let out = self.out
        switch k.name {
        case let .literal(s): s.withUTF8Buffer { Self.appendString(utf8: $0, to: out) }
        case let .text(t): Self.appendString(t, to: out)
        }
        out.byte(UInt8(ascii: ":"))
    }

    private mutating func open(_ k: JSONKey?, _ bracket: UInt8) {
        key(k)
        out.byte(bracket)
        outerNeedsComma.append(needsComma)
        needsComma = false
    }

    private mutating func close(_ bracket: UInt8) {
        needsComma = outerNeedsComma.removeLast()
        out.byte(bracket)
    }

    public mutating func beginObject(_ k: JSONKey? = nil) { open(k, UInt8(ascii: "{")) }
    public mutating func endObject() { close(UInt8(ascii: "}")) }
    public mutating func beginArray(_ k: JSONKey? = nil) { open(k, UInt8(ascii: "[")) }
    public mutating func endArray() { close(UInt8(ascii: "]")) }

    public mutating func string(_ k: JSONKey?, _ v: String) { key(k); Self.appendString(v, to: out) }
    public mutating func int<T: BinaryInteger>(_ k: JSONKey?, _ v: T) { key(k); putInteger(v) }
    public mutating func double(_ k: JSONKey?, _ v: Double) {
        key(k)
        if v.isFinite { put(String(v)) } else { put("null") }
    }
    public mutating func bool(_ k: JSONKey?, _ v: Bool) { key(k); if v { put("true") } else { put("false") } }
    public mutating func null(_ k: JSONKey?) { key(k); put("null") }
    public mutating func optional<T: BinaryInteger>(_ k: JSONKey?, _ v: T?) {
        if let v { int(k, v) } else { null(k) }
    }
    public mutating func optional(_ k: JSONKey?, _ v: String?) {
        if let v { string(k, v) } else { null(k) }
    }
    /// Inserts already-encoded JSON.
    public mutating func raw(_ k: JSONKey?, _ json: String) { key(k); put(json) }

    /// `s` as a JSON string (RFC 8259 section 7): quotes, backslashes and control characters escaped,
    /// runs that need no escape copied whole.
    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// `s` as a JSON string into `out` (the tests' entry point).
    static func appendString(_ s: String, to out: inout [UInt8]) {
        let buffer = TextBuffer()
        appendString(s, to: buffer)
        out.append(contentsOf: buffer.bytes)
    }

    static func appendString(_ s: String, to out: TextBuffer) {
        var s = s
        s.withUTF8 { appendString(utf8: $0, to: out) }
    }

    static func appendString(utf8: UnsafeBufferPointer<UInt8>, to out: TextBuffer) {
        guard let base = utf8.baseAddress else { out.append("\"\""); return }
        // Most strings (keys, names, sentences) need no escape: found so, they go out in one copy.
        if !mayNeedEscape(base, utf8.count) {
            out.byte(UInt8(ascii: "\""))
            out.append(utf8)
            out.byte(UInt8(ascii: "\""))
            return
        }
        out.byte(UInt8(ascii: "\""))
        var runStart = 0
        var i = 0
        while i < utf8.count {
            // Eight bytes at a time while none of them needs an escape.
            if i + 8 <= utf8.count, !mayNeedEscape(UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)) {
                i += 8
                continue
            }
            let byte = utf8[i]
            i += 1
            if byte >= 0x20 && byte != 0x22 && byte != 0x5C { continue }
            let at = i - 1
            if runStart != at { out.append(UnsafeBufferPointer(rebasing: utf8[runStart ..< at])) }
            switch byte {
            case 0x22: out.append("\\\"")
            case 0x5C: out.append("\\\\")
            case 0x0A: out.append("\\n")
            case 0x0D: out.append("\\r")
            case 0x09: out.append("\\t")
            default:
                out.append("\\u00")
                out.byte(hex[Int(byte >> 4)])
                out.byte(hex[Int(byte & 0xF)])
            }
            runStart = at + 1
        }
        if runStart < utf8.count { out.append(UnsafeBufferPointer(rebasing: utf8[runStart...])) }
        out.byte(UInt8(ascii: "\""))
    }

    /// Some byte of the `count` at `base` may need an escape (see the word-wise check below; the
    /// last few bytes are checked one by one).
    @inline(__always) static func mayNeedEscape(_ base: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        var i = 0
        while i + 8 <= count {
            if mayNeedEscape(UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)) { return true }
            i += 8
        }
        while i < count {
            let byte = base[i]
            if byte < 0x20 || byte == 0x22 || byte == 0x5C { return true }
            i += 1
        }
        return false
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

/// A member name. Names written in the code are literals: their bytes are read where the compiler
/// put them, with no String to make, retain and lend (the report writes ~85 names per connection,
/// ~200 instructions each as Strings). A name made at run time is given as `JSONKey(string)`.
/// Either is escaped like any JSON string.
public struct JSONKey: ExpressibleByStringLiteral, Sendable {
    enum Name: Sendable {
        case literal(StaticString)
        case text(String)
    }
    let name: Name
    public init(stringLiteral value: StaticString) { name = .literal(value) }
    public init(_ text: String) { name = .text(text) }
}
