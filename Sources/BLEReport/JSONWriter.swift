/// A small streaming JSON builder: output is appended to a String with correct escaping, without
/// Foundation or intermediate dictionaries (one object per frame in `packets --json`).
public struct JSONWriter {
    public private(set) var output = ""
    private var needsComma: [Bool] = [false]

    public init() {}

    private mutating func separator() {
        if needsComma[needsComma.count - 1] { output += "," }
        needsComma[needsComma.count - 1] = true
    }

    private mutating func key(_ k: String?) {
        separator()
        if let k { Self.appendString(k, to: &output); output += ":" }
    }

    public mutating func beginObject(_ k: String? = nil) { key(k); output += "{"; needsComma.append(false) }
    public mutating func endObject() { needsComma.removeLast(); output += "}" }
    public mutating func beginArray(_ k: String? = nil) { key(k); output += "["; needsComma.append(false) }
    public mutating func endArray() { needsComma.removeLast(); output += "]" }

    public mutating func string(_ k: String?, _ v: String) { key(k); Self.appendString(v, to: &output) }
    public mutating func int<T: BinaryInteger>(_ k: String?, _ v: T) { key(k); output += String(v) }
    public mutating func double(_ k: String?, _ v: Double) {
        key(k)
        output += v.isFinite ? String(v) : "null"
    }
    public mutating func bool(_ k: String?, _ v: Bool) { key(k); output += v ? "true" : "false" }
    public mutating func null(_ k: String?) { key(k); output += "null" }
    public mutating func optional<T: BinaryInteger>(_ k: String?, _ v: T?) {
        if let v { int(k, v) } else { null(k) }
    }
    public mutating func optional(_ k: String?, _ v: String?) {
        if let v { string(k, v) } else { null(k) }
    }
    /// Inserts already-encoded JSON.
    public mutating func raw(_ k: String?, _ json: String) { key(k); output += json }

    static func appendString(_ s: String, to out: inout String) {
        out += "\""
        // Runs of characters that need no escape are appended whole (a string per scalar is slow).
        let utf8 = s.utf8
        var runStart = utf8.startIndex
        var i = runStart
        while i != utf8.endIndex {
            let byte = utf8[i]
            if byte >= 0x20 && byte != 0x22 && byte != 0x5C { utf8.formIndex(after: &i); continue }
            if runStart != i { out += s[runStart ..< i] }
            switch byte {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            default: out += "\\u00" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16)
            }
            utf8.formIndex(after: &i)
            runStart = i
        }
        if runStart != utf8.endIndex { out += s[runStart...] }
        out += "\""
    }
}
