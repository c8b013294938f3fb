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
        var flat = FlatLayers()
        let range = flat.append(fields)
        flat.withView { view in _ = render(view, fieldsAt: range.lowerBound, count: fields.count, indent: indent, into: &out) }
    }

    /// Renders the `count` fields from entry `i` on (with what is nested in them); returns the entry after them.
    func render(_ view: FlatLayers.View, fieldsAt i: Int, count: Int, indent: Int, into out: inout TextBuffer) -> Int {
        var i = i
        var lastAddressType: LEAddressType? = nil
        for _ in 0 ..< count {
            guard case let .field(name, id, value) = view.entries[i] else { return i + 1 }   // not made by FlatLayers
            i += 1
            out.spaces(indent)
            switch value {
            case let .group(fields):
                out.append(name); out.append(":\n")
                i = render(view, fieldsAt: i, count: fields, indent: indent + 2, into: &out)
            case let .list(items):
                out.append(name); out.append(": "); out.decimal(items)
                out.append(items == 1 ? " entry\n" : " entries\n")
                for k in 0 ..< items {
                    guard case let .item(fields) = view.entries[i] else { return i + 1 }
                    out.spaces(indent + 2); out.append(name); out.append(" #"); out.decimal(k + 1); out.append(":\n")
                    i = render(view, fieldsAt: i + 1, count: fields, indent: indent + 4, into: &out)
                }
            case let .integer(v, .flags(bytes, table)):
                out.append(name); out.append(": 0x"); out.hex(v, width: bytes * 2); out.newline()
                let unknown = table.forEachSetFlag(v) { n in out.spaces(indent + 2); out.append(n); out.newline() }
                if unknown != 0 {
                    out.spaces(indent + 2); out.append("Unknown flags (0x"); out.hex(unknown, width: bytes * 2); out.append(")\n")
                }
            case let .integer(v, format):
                out.append(name); out.append(": "); Self.integer(v, format, into: &out); out.newline()
                if id.isAddressType {
                    lastAddressType = LEAddressType(rawValue: UInt8(truncatingIfNeeded: v))
                }
            case let .bytes(t) where t.count > 16:
                let b = view[t]
                out.append(name); out.byte(0x5B); out.decimal(b.count); out.append("]:\n")
                var k = 0
                while k < b.count {
                    out.spaces(indent + 2); out.hexBytes(UnsafeBufferPointer(rebasing: b[k ..< min(k + 16, b.count)])); out.newline()
                    k += 16
                }
            case let .bytes(t):
                out.append(name); out.append(": ")
                if t.count == 0 { out.append("(empty)") } else { out.hexBytes(view[t]) }
                out.newline()
            case let .address(a, type):
                let t = type ?? lastAddressType
                out.append(name); out.append(": "); Self.address(a, into: &out)
                if let t, t.isRandom {
                    out.append(" ("); out.append(a.randomSubtype.rawValue); out.append(")")
                } else if let vendor = OUI.vendorBytes(a, type: t, id: id) {
                    out.append(" ("); out.append(vendor); out.append(")")   // btmon: `(Apple, Inc.)`
                }
                out.newline()
            case let .text(t), let .note(t):
                out.append(name); out.append(": "); out.append(view[t]); out.newline()
            case let .secret(t):
                out.append(name); out.append(": "); secret(view[t], into: &out); out.newline()
            }
        }
        return i
    }

    /// Key material: its first two bytes unless keys are requested.
    private func secret(_ b: UnsafeBufferPointer<UInt8>, into out: inout TextBuffer) {
        if options.showKeys || b.count <= 2 { out.hexBytes(b); return }
        out.hexBytes(UnsafeBufferPointer(rebasing: b.prefix(2))); out.append(" … ("); out.decimal(b.count); out.append(" bytes; --show-keys to print)")
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
            b.withUnsafeBufferPointer { secret($0, into: &out) }
        case let .note(t):
            out.append(t)
        case let .problem(e):
            out.append(e.description)
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
            if let s = table.staticName(n) { out.append(s) } else { out.append(table.fallbackName(n) ?? "Unknown") }
            out.append(" (0x"); out.hex(n, width: bytes * 2); out.byte(0x29)
        case let .flags(bytes, _):
            out.append("0x"); out.hex(n, width: bytes * 2)
        }
    }
}
