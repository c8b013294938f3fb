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
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                out += "\\u00" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
