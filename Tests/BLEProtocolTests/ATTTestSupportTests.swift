import TestSupport
import Testing
import BLEBytes
@testable import BLEProtocol

/// Helpers shared by the upper-layer tests (ATT, L2CAP, SMP, AD, GATT values, UUID).
enum ATTTestSupport {
    /// Bytes from a hex string; an invalid literal is a test bug and gives an empty array (and a failure).
    static func bytes(_ hex: String) -> [UInt8] {
        guard let b = Hex.bytes(hex) else {
            Issue.record("bad hex literal: \(hex)")
            return []
        }
        return b
    }

    /// Runs a typed decoder over `bytes` (file offset 0 = first byte) and reports the outcome and the
    /// bytes left in the reader.
    static func run<T>(_ bytes: [UInt8], base: Int = 0,
                       _ body: (inout ByteReader) throws(DecodeError) -> T) -> (result: Result<T, DecodeError>, remaining: Int) {
        bytes.withUnsafeBytes { raw in
            var r = ByteReader(raw, base: base)
            do throws(DecodeError) {
                let v = try body(&r)
                return (.success(v), r.remaining)
            } catch {
                return (.failure(error), r.remaining)
            }
        }
    }

    static func run<T>(_ hex: String, _ body: (inout ByteReader) throws(DecodeError) -> T) -> Result<T, DecodeError> {
        run(bytes(hex), body).result
    }

    /// Runs a non-throwing (display) decoder over `bytes`.
    static func show<T>(_ bytes: [UInt8], base: Int = 0, _ body: (inout ByteReader) -> T) -> T {
        bytes.withUnsafeBytes { raw in
            var r = ByteReader(raw, base: base)
            return body(&r)
        }
    }

    static func show<T>(_ hex: String, _ body: (inout ByteReader) -> T) -> T { show(bytes(hex), body) }

    /// Every prefix of `bytes` (including all of it) through `body`: must return or throw, never trap.
    static func prefixes(_ bytes: [UInt8], _ body: (inout ByteReader) -> Void) {
        for n in 0...bytes.count {
            show(Array(bytes[..<n]), body)
        }
    }

    /// How a robustness run ended for its buffers: accepted by the decoder, or refused (thrown, or
    /// marked malformed). A run that never refuses never reached the error paths it claims to test,
    /// and one that never accepts never got past the first check: tests expect both.
    struct Outcomes: CustomStringConvertible {
        var accepted = 0
        var refused = 0
        mutating func note(_ ok: Bool) { if ok { accepted += 1 } else { refused += 1 } }
        var both: Bool { accepted > 0 && refused > 0 }
        var description: String { "\(accepted) accepted, \(refused) refused" }
    }

    /// Whether display fields carry a `Malformed` note, at any depth.
    static func malformed(_ fields: [Field]) -> Bool {
        fields.contains { f in
            if f.nameString == "Malformed" { return true }
            switch f.value {
            case let .group(inner): return malformed(inner)
            case let .list(items): return items.contains(where: malformed)
            default: return false
            }
        }
    }

    /// Whether `body` accepted each prefix of `bytes` (index n: the first n bytes).
    static func prefixOutcomes(_ bytes: [UInt8], _ body: (inout ByteReader) -> Bool) -> [Bool] {
        (0...bytes.count).map { n in show(Array(bytes[..<n]), body) }
    }

    /// `fuzz`, tallying what `body` accepted and refused.
    static func fuzzOutcomes(seed: UInt64, count: Int = 10_000, maxLength: Int = 48, leads: [UInt8] = [],
                             _ body: (inout ByteReader) -> Bool) -> Outcomes {
        var o = Outcomes()
        fuzz(seed: seed, count: count, maxLength: maxLength, leads: leads) { r in o.note(body(&r)) }
        return o
    }

    /// `count` seeded random buffers of 0…`maxLength` bytes through `body`; half of them start with one
    /// of `leads` so the decoders behind known codes see random parameters.
    static func fuzz(seed: UInt64, count: Int = 10_000, maxLength: Int = 48, leads: [UInt8] = [],
                     _ body: (inout ByteReader) -> Void) {
        var rng = ATTTestSplitMix64(seed: seed)
        var buffer: [UInt8] = []
        for _ in 0..<count {
            let length = Int(rng.next() % UInt64(maxLength + 1))
            buffer.removeAll(keepingCapacity: true)
            for _ in 0..<length { buffer.append(UInt8(truncatingIfNeeded: rng.next())) }
            if !leads.isEmpty, !buffer.isEmpty, rng.next() & 1 == 0 {
                buffer[0] = leads[Int(rng.next() % UInt64(leads.count))]
            }
            show(buffer, body)
        }
    }

    /// A plain-text rendering of fields for assertions: `Name: value`, nested with two spaces.
    static func render(_ fields: [Field], indent: String = "") -> [String] {
        var lines: [String] = []
        for f in fields {
            switch f.value {
            case let .group(inner):
                lines.append("\(indent)\(f.name):")
                lines += render(inner, indent: indent + "  ")
            case let .list(items):
                lines.append("\(indent)\(f.name): \(items.count) item\(items.count == 1 ? "" : "s")")
                for item in items { lines += render(item, indent: indent + "  ") }
            default:
                lines.append("\(indent)\(f.name): \(text(f.value))")
            }
        }
        return lines
    }

    static func text(_ v: FieldValue) -> String {
        switch v {
        case let .integer(n, format):
            switch format {
            case .decimal: return "\(n)"
            case let .hex(bytes): return "0x" + Hex.pad(n, bytes * 2)
            case let .signed(bytes, unit):
                let shift = UInt64(64 - 8 * bytes)
                return "\(Int64(bitPattern: n << shift) >> Int64(shift)) \(unit)"
            case let .scaled(_, factor, unit): return "\(Double(n) * factor) \(unit)"
            case let .named(bytes, table): return "\(table.name(n) ?? "Unknown") (0x\(Hex.pad(n, bytes * 2)))"
            case let .flags(bytes, table):
                let (names, unknown) = table.flagNames(n)
                return "0x\(Hex.pad(n, bytes * 2)) [\(names.joined(separator: ", "))\(unknown != 0 ? " unknown 0x" + String(unknown, radix: 16) : "")]"
            }
        case let .address(a, type): return type.map { "\(a) (\($0.name))" } ?? "\(a)"
        case let .bytes(b): return Hex.string(b)
        case let .text(s): return s
        case let .secret(b): return "<secret \(b.count) bytes>"
        case let .note(s): return "note: \(s)"
        case let .problem(e): return "note: \(e)"
        case .group, .list: return "…"
        }
    }

    /// All rendered lines of a layer, for `contains` checks.
    static func lines(_ layer: Layer) -> [String] { render(layer.fields) }

    /// True when some rendered line contains `text`.
    static func has(_ layer: Layer, _ text: String) -> Bool { lines(layer).contains { $0.contains(text) } }
    static func has(_ fields: [Field], _ text: String) -> Bool { render(fields).contains { $0.contains(text) } }

    /// Every value in `fields`, recursively.
    static func values(_ fields: [Field]) -> [FieldValue] {
        var out: [FieldValue] = []
        for f in fields {
            out.append(f.value)
            switch f.value {
            case let .group(inner): out += values(inner)
            case let .list(items): for item in items { out += values(item) }
            default: break
            }
        }
        return out
    }
}

typealias ATTTestSplitMix64 = SplitMix64
