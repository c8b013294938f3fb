import BLEBytes
import BLEProtocol

/// Output options shared by the text and JSON renderers.
public struct RenderOptions: Sendable {
    /// Print key material in full (`--show-keys`); by default only its first bytes are shown.
    public var showKeys = false
    public init(showKeys: Bool = false) { self.showKeys = showKeys }
}

/// Renders fields as btmon-style lines: `Name: decoded (raw)`, indented by nesting level.
public struct FieldText {
    public var options: RenderOptions
    public init(options: RenderOptions) { self.options = options }

    /// Appends one line per field (and nested lines) at `indent` spaces.
    public func render(_ fields: [Field], indent: Int, into out: inout String) {
        var lastAddressType: LEAddressType? = nil
        for f in fields {
            let pad = String(repeating: " ", count: indent)
            switch f.value {
            case let .group(children):
                out += pad + f.nameString + ":\n"
                render(children, indent: indent + 2, into: &out)
            case let .list(items):
                out += pad + f.nameString + ": \(items.count) entr\(items.count == 1 ? "y" : "ies")\n"
                for (i, item) in items.enumerated() {
                    out += pad + "  " + f.nameString + " #\(i + 1):\n"
                    render(item, indent: indent + 4, into: &out)
                }
            case let .integer(v, .flags(bytes, table)):
                out += pad + f.nameString + ": 0x" + Hex.pad(v, bytes * 2) + "\n"
                let (names, unknown) = table.flagNames(v)
                for n in names { out += pad + "  " + n + "\n" }
                if unknown != 0 { out += pad + "  Unknown flags (0x" + Hex.pad(unknown, bytes * 2) + ")\n" }
            case let .bytes(b) where b.count > 16:
                out += pad + f.nameString + "[\(b.count)]:\n"
                var i = 0
                while i < b.count {
                    out += pad + "  " + Hex.string(b[i ..< min(i + 16, b.count)]) + "\n"
                    i += 16
                }
            case let .address(a, type):
                let t = type ?? lastAddressType
                out += pad + f.nameString + ": " + a.description + (t.map { $0.isRandom ? " (\(a.randomSubtype.rawValue))" : "" } ?? "") + "\n"
            default:
                out += pad + f.nameString + ": " + value(f.value) + "\n"
            }
            if case let .integer(v, _) = f.value, f.nameString.hasSuffix("Address Type") {
                lastAddressType = LEAddressType(rawValue: UInt8(truncatingIfNeeded: v))
            }
        }
    }

    /// One field value on one line.
    public func value(_ v: FieldValue) -> String {
        switch v {
        case let .integer(n, format):
            return Self.integer(n, format)
        case let .address(a, type):
            return a.description + (type.map { " (\($0.describe(a)))" } ?? "")
        case let .bytes(b):
            return b.isEmpty ? "(empty)" : Hex.string(b)
        case let .text(t):
            return t
        case let .secret(b):
            if options.showKeys || b.count <= 2 { return Hex.string(b) }
            return Hex.string(b.prefix(2)) + " … (\(b.count) bytes; --show-keys to print)"
        case let .note(t):
            return t
        case let .group(fields):
            return fields.map { $0.nameString + "=" + value($0.value) }.joined(separator: ", ")
        case let .list(items):
            return "\(items.count) entries"
        }
    }

    public static func integer(_ n: UInt64, _ format: FieldFormat) -> String {
        switch format {
        case .decimal: return String(n)
        case let .hex(bytes): return "0x" + Hex.pad(n, bytes * 2)
        case let .signed(bytes, unit):
            let bits = UInt64(bytes * 8)
            let signed = bits >= 64 ? Int64(bitPattern: n) : (n & (1 << (bits - 1)) != 0 ? Int64(n) - (1 << Int64(bits)) : Int64(n))
            return "\(signed) \(unit) (0x\(Hex.pad(n, bytes * 2)))"
        case let .scaled(bytes, factor, unit):
            return formatScaled(Double(n) * factor) + " \(unit) (0x\(Hex.pad(n, bytes * 2)))"
        case let .named(bytes, table):
            return (table.name(n) ?? "Unknown") + " (0x\(Hex.pad(n, bytes * 2)))"
        case let .flags(bytes, _):
            return "0x" + Hex.pad(n, bytes * 2)
        }
    }

    static func formatScaled(_ v: Double) -> String {
        // Two decimals, without Foundation's String(format:).
        let hundredths = Int64((v * 100).rounded())
        let whole = hundredths / 100, frac = abs(hundredths % 100)
        return "\(whole).\(frac < 10 ? "0" : "")\(frac)"
    }
}
