import TestSupport
import Testing
import BLEBytes
@testable import BLEProtocol

/// Helpers for the HCI decoder tests: hex vectors in, `Layer`s out, fields found by name.
enum HCITest {
    /// `HCIEvent.decode` of a whole event packet (event code first), offsets from 0.
    static func typedEvent(_ bytes: [UInt8]) throws -> HCIEvent {
        try bytes.withUnsafeBytes { b throws(DecodeError) in
            var r = ByteReader(b, base: 0)
            return try HCIEvent.decode(&r)
        }
    }

    /// Parses a hex vector; records an issue (and returns no bytes) when the literal is not hex.
    static func bytes(_ hex: String, sourceLocation: SourceLocation = #_sourceLocation) -> [UInt8] {
        guard let b = Hex.bytes(hex) else {
            Issue.record("not a hex vector: \(hex)", sourceLocation: sourceLocation)
            return []
        }
        return b
    }

    /// Decodes one H4 packet body (without the H4 type byte) of the given type.
    static func decode(_ type: HCIPacketType, _ bytes: [UInt8], originalLength: Int? = nil) -> Layer {
        bytes.withUnsafeBytes { raw in
            var r = ByteReader(raw)
            return HCIDecoder.decode(type, &r, originalLength: originalLength)
        }
    }

    static func decode(_ type: HCIPacketType, _ hex: String, originalLength: Int? = nil,
                       sourceLocation: SourceLocation = #_sourceLocation) -> Layer {
        decode(type, bytes(hex, sourceLocation: sourceLocation), originalLength: originalLength)
    }
}

typealias HCITestSplitMix64 = SplitMix64

extension Array where Element == Field {
    /// The first field with this name, looking into groups but not into lists.
    func hciField(_ name: String) -> FieldValue? {
        for f in self {
            if f.nameString == name { return f.value }
            if case let .group(inner) = f.value, let v = inner.hciField(name) { return v }
        }
        return nil
    }

    /// A field by path: `"Reports[1].Address"`, `"Handles[0].Count"`, `"Reason"`.
    func hciValue(_ path: String) -> FieldValue? {
        var fields = self
        let parts = path.split(separator: ".")
        for (i, part) in parts.enumerated() {
            var name = Substring(part), index: Int? = nil
            if let open = part.firstIndex(of: "["), part.last == "]" {
                name = part[..<open]
                index = Int(part[part.index(after: open)..<part.index(before: part.endIndex)])
            }
            guard let value = fields.hciField(String(name)) else { return nil }
            if let index {
                guard case let .list(items) = value, items.indices.contains(index) else { return nil }
                if i == parts.count - 1 { return .group(items[index]) }
                fields = items[index]
            } else {
                if i == parts.count - 1 { return value }
                guard case let .group(inner) = value else { return nil }
                fields = inner
            }
        }
        return nil
    }
}

extension Layer {
    func hciValue(_ path: String) -> FieldValue? { fields.hciValue(path) }
}

extension FieldValue {
    var hciInteger: UInt64? { if case let .integer(v, _) = self { v } else { nil } }
    /// The table name of a named integer (`Remote User Terminated Connection`).
    var hciName: String? {
        guard case let .integer(v, format) = self, case let .named(_, table) = format else { return nil }
        return table.name(v)
    }
    /// Names of the set bits of a flags integer.
    var hciFlagNames: [String]? {
        guard case let .integer(v, format) = self, case let .flags(_, table) = format else { return nil }
        return table.flagNames(v).names
    }
    var hciAddress: String? { if case let .address(a, _) = self { a.description } else { nil } }
    var hciBytes: [UInt8]? {
        switch self {
        case let .bytes(b), let .secret(b): b
        default: nil
        }
    }
    var hciText: String? { if case let .text(t) = self { t } else { nil } }
    var hciList: [[Field]]? { if case let .list(l) = self { l } else { nil } }
    /// The display value of a scaled integer (`60.0` for 0x0060 × 0.625 ms).
    var hciScaled: Double? {
        guard case let .integer(v, format) = self, case let .scaled(_, factor, _) = format else { return nil }
        return Double(v) * factor
    }
}
