import BLEBytes
import BLEProtocol

/// A decoded field with its path in the message (`Reports[0].Address`), as the comparator sees
/// it: the display decoders' `Field` trees (`HCIDecoder`, `L2CAPDisplay`) flattened, lists
/// represented by their item count plus one path per item.
struct FlatField: Sendable {
    var path: String
    /// The field's own name (`Address`), as shown.
    var name: String
    /// What the field is: what the comparator's rules match (`FieldID`), never the name. A field
    /// of a group without an id of its own has the group's (the decoded parts of an attribute value).
    var id: FieldID
    /// Not inside a group or list.
    var topLevel: Bool
    /// The L2CAP channel whose payload (ATT, SMP…) the field is in; nil for the fields of an HCI
    /// packet and of the L2CAP basic header.
    var channel: L2CAP.ChannelID?
    var value: FieldValue
    /// True for the synthetic item count of a list.
    var isCount = false

    /// - Parameter channel: for the layers of an L2CAP PDU (`L2CAPDisplay`: the basic header's,
    ///   then its channel's), the PDU's channel.
    static func flatten(_ layers: [Layer], channel: L2CAP.ChannelID? = nil) -> [FlatField] {
        var out: [FlatField] = []
        for (i, layer) in layers.enumerated() {
            let prefix = layers.count > 1 ? "\(layer.protocolName)." : ""
            flatten(layer.fields, prefix: prefix, channel: i == 0 ? nil : channel, inherited: .unspecified, topLevel: true, into: &out)
        }
        return out
    }

    private static func flatten(_ fields: [Field], prefix: String, channel: L2CAP.ChannelID?, inherited: FieldID, topLevel: Bool,
                                into out: inout [FlatField]) {
        for f in fields {
            let name = f.nameString
            let id = f.id == .unspecified ? inherited : f.id
            switch f.value {
            case let .group(sub):
                flatten(sub, prefix: prefix + name + ".", channel: channel, inherited: id, topLevel: false, into: &out)
            case let .list(items):
                out.append(FlatField(path: prefix + name, name: name, id: id, topLevel: topLevel, channel: channel,
                                     value: .integer(UInt64(items.count), .decimal(bytes: 2)), isCount: true))
                for (i, item) in items.enumerated() {
                    flatten(item, prefix: prefix + "\(name)[\(i)].", channel: channel, inherited: .unspecified, topLevel: false, into: &out)
                }
            case .note, .problem:
                continue
            default:
                out.append(FlatField(path: prefix + name, name: name, id: id, topLevel: topLevel, channel: channel, value: f.value))
            }
        }
    }
}

/// Equality and short text of decoded values (raw values compared; names only shown).
enum ValueText {
    static func same(_ a: FieldValue, _ b: FieldValue) -> Bool {
        switch (a, b) {
        case let (.integer(x, _), .integer(y, _)): x == y
        case let (.address(x, _), .address(y, _)): x == y
        case let (.bytes(x), .bytes(y)), let (.secret(x), .secret(y)): x == y
        case let (.text(x), .text(y)): x == y
        default: false
        }
    }

    /// `Success (0x00)`, `15.00 msec (0x000c)`, `C0:5E:1A:00:00:02`, `67 6f 6c 64 65 6e "golden"`.
    static func describe(_ v: FieldValue) -> String {
        switch v {
        case let .integer(n, format): integer(n, format)
        case let .address(a, _): a.description
        case let .bytes(b): bytes(b)
        case let .secret(b): bytes(b)
        case let .text(t): "\"\(t)\""
        case let .group(fields): "{\(fields.count) fields}"
        case let .list(items): "\(items.count) item\(items.count == 1 ? "" : "s")"
        case let .note(t): t
        case let .problem(e): e.description
        }
    }

    static func integer(_ n: UInt64, _ format: FieldFormat) -> String {
        switch format {
        case .decimal: return String(n)
        case let .hex(width): return "0x" + Hex.pad(n, width * 2)
        case let .signed(width, unit):
            let shift = UInt64(64 - 8 * min(max(width, 1), 8))
            return "\(Int64(bitPattern: n << shift) >> Int64(shift)) \(unit)"
        case let .scaled(width, factor, unit):
            return "\(Double(n) * factor) \(unit) (0x\(Hex.pad(n, width * 2)))"
        case let .named(width, table):
            return "\(table.name(n) ?? "Unknown") (0x\(Hex.pad(n, width * 2)))"
        case let .flags(width, _):
            return "0x" + Hex.pad(n, width * 2)
        }
    }

    static func bytes(_ b: [UInt8]) -> String {
        let shown = b.prefix(32)
        var s = Hex.string(shown) + (b.count > 32 ? " … (\(b.count) bytes)" : "")
        if !b.isEmpty, b.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { s += " \"\(String(decoding: b, as: UTF8.self))\"" }
        return s
    }
}
