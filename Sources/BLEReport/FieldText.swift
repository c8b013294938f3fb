import BLEBytes
import BLEProtocol

/// Output options shared by the text and JSON renderers.
public struct RenderOptions: Sendable {
    /// Print key material in full (`--show-keys`); by default only its first bytes are shown.
    public var showKeys = false
    public init(showKeys: Bool = false) { self.showKeys = showKeys }
}

/// Renders fields as btmon-style lines: `Name: decoded (raw)`, indented by nesting level. The work
/// is done into a `TextBuffer`; the String entry points wrap it.
public struct FieldText {
    public var options: RenderOptions
    public init(options: RenderOptions) { self.options = options }

    /// Appends one line per field (and nested lines) at `indent` spaces.
    public func render(_ fields: [Field], indent: Int, into out: inout String) {
        var b = TextBuffer()
        render(fields, indent: indent, into: &b)
        out += b.string
    }

    public func render(_ fields: [Field], indent: Int, into out: inout TextBuffer) {
        var lastAddressType: LEAddressType? = nil
        for i in fields.indices {   // by index: a Field copy retains its value
            out.spaces(indent)
            let name = fields[i].name
            switch fields[i].value {
            case let .group(children):
                out.append(name); out.append(":\n")
                render(children, indent: indent + 2, into: &out)
            case let .list(items):
                out.append(name); out.append(": "); out.decimal(items.count)
                out.append(items.count == 1 ? " entry\n" : " entries\n")
                for (i, item) in items.enumerated() {
                    out.spaces(indent + 2); out.append(name); out.append(" #"); out.decimal(i + 1); out.append(":\n")
                    render(item, indent: indent + 4, into: &out)
                }
            case let .integer(v, .flags(bytes, table)):
                out.append(name); out.append(": 0x"); out.hex(v, width: bytes * 2); out.newline()
                let (names, unknown) = table.flagNames(v)
                for n in names { out.spaces(indent + 2); out.append(n); out.newline() }
                if unknown != 0 {
                    out.spaces(indent + 2); out.append("Unknown flags (0x"); out.hex(unknown, width: bytes * 2); out.append(")\n")
                }
            case let .bytes(b) where b.count > 16:
                out.append(name); out.byte(0x5B); out.decimal(b.count); out.append("]:\n")
                var i = 0
                while i < b.count {
                    out.spaces(indent + 2); out.hexBytes(b[i ..< min(i + 16, b.count)]); out.newline()
                    i += 16
                }
            case let .address(a, type):
                let t = type ?? lastAddressType
                out.append(name); out.append(": "); Self.address(a, into: &out)
                if let t, t.isRandom { out.append(" ("); out.append(a.randomSubtype.rawValue); out.append(")") }
                out.newline()
            default:
                out.append(name); out.append(": "); value(fields[i].value, into: &out); out.newline()
            }
            if case let .integer(v, _) = fields[i].value, fields[i].nameHasSuffix("Address Type") {
                lastAddressType = LEAddressType(rawValue: UInt8(truncatingIfNeeded: v))
            }
        }
    }

    /// One field value on one line.
    public func value(_ v: FieldValue) -> String {
        var b = TextBuffer(capacity: 32)
        value(v, into: &b)
        return b.string
    }

    public func value(_ v: FieldValue, into out: inout TextBuffer) {
        switch v {
        case let .integer(n, format):
            Self.integer(n, format, into: &out)
        case let .address(a, type):
            Self.address(a, into: &out)
            if let type { out.append(" ("); out.append(type.describe(a)); out.append(")") }
        case let .bytes(b):
            if b.isEmpty { out.append("(empty)") } else { out.hexBytes(b) }
        case let .text(t):
            out.append(t)
        case let .secret(b):
            if options.showKeys || b.count <= 2 { out.hexBytes(b); return }
            out.hexBytes(b.prefix(2)); out.append(" … ("); out.decimal(b.count); out.append(" bytes; --show-keys to print)")
        case let .note(t):
            out.append(t)
        case let .group(fields):
            for (i, f) in fields.enumerated() {
                if i > 0 { out.append(", ") }
                out.append(f.name); out.byte(0x3D); value(f.value, into: &out)
            }
        case let .list(items):
            out.decimal(items.count); out.append(" entries")
        }
    }

    /// `C0:FF:EE:00:00:01`, upper case as btmon shows addresses.
    static func address(_ a: BDAddr, into out: inout TextBuffer) {
        for i in stride(from: 40, through: 0, by: -8) {
            if i != 40 { out.byte(0x3A) }
            let b = UInt8(truncatingIfNeeded: a.value >> UInt64(i))
            out.byte(TextBuffer.upperDigit(b >> 4)); out.byte(TextBuffer.upperDigit(b & 0x0F))
        }
    }

    public static func integer(_ n: UInt64, _ format: FieldFormat) -> String {
        var b = TextBuffer(capacity: 32)
        integer(n, format, into: &b)
        return b.string
    }

    public static func integer(_ n: UInt64, _ format: FieldFormat, into out: inout TextBuffer) {
        switch format {
        case .decimal: out.decimal(n)
        case let .hex(bytes): out.append("0x"); out.hex(n, width: bytes * 2)
        case let .signed(bytes, unit):
            let bits = UInt64(bytes * 8)
            let signed = bits >= 64 ? Int64(bitPattern: n) : (n & (1 << (bits - 1)) != 0 ? Int64(n) - (1 << Int64(bits)) : Int64(n))
            out.decimal(signed); out.byte(0x20); out.append(unit); out.append(" (0x"); out.hex(n, width: bytes * 2); out.byte(0x29)
        case let .scaled(bytes, factor, unit):
            out.fixed2(Double(n) * factor); out.byte(0x20); out.append(unit); out.append(" (0x"); out.hex(n, width: bytes * 2); out.byte(0x29)
        case let .named(bytes, table):
            if let s = table.staticName(n) { out.append(s) } else { out.append(table.fallback?(n) ?? "Unknown") }
            out.append(" (0x"); out.hex(n, width: bytes * 2); out.byte(0x29)
        case let .flags(bytes, _):
            out.append("0x"); out.hex(n, width: bytes * 2)
        }
    }

    static func formatScaled(_ v: Double) -> String {
        let b = TextBuffer(capacity: 16)
        b.fixed2(v)
        return b.string
    }
}
