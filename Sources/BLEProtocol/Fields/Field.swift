import BLEBytes
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One decoded protocol field, for display and JSON: a name as the spec spells it and a value that
/// remembers how it should be shown. Produced by the table-driven decoders (`FieldSpec`), rendered by
/// BLEReport. Analysis code does not read `Field`s; it uses the typed decoders.
public struct Field: Sendable {
    public let name: StaticString
    public let value: FieldValue

    @inlinable public init(_ name: StaticString, _ value: FieldValue) { (self.name, self.value) = (name, value) }

    public var nameString: String { name.description }

    /// `name == other`, comparing the bytes (no String is made: renderers ask this per field).
    @inlinable
    public func nameIs(_ other: StaticString) -> Bool {
        name.utf8CodeUnitCount == other.utf8CodeUnitCount
            && memcmp(name.utf8Start, other.utf8Start, name.utf8CodeUnitCount) == 0
    }

    /// `name` ends with `suffix`, comparing the bytes.
    @inlinable
    public func nameHasSuffix(_ suffix: StaticString) -> Bool {
        let n = name.utf8CodeUnitCount, k = suffix.utf8CodeUnitCount
        return n >= k && memcmp(name.utf8Start + (n - k), suffix.utf8Start, k) == 0
    }
}

/// A decoded value and how to show it.
public enum FieldValue: Sendable {
    /// An integer with its display format (raw value always shown alongside the decoded one).
    case integer(UInt64, FieldFormat)
    case address(BDAddr, type: LEAddressType?)
    case bytes([UInt8])
    case text(String)
    /// Key material: shown shortened unless keys are requested (public bug reports).
    case secret([UInt8])
    /// A structure inside the packet.
    case group([Field])
    /// Repeated structures (advertising reports, handles of Number Of Completed Packets).
    case list([[Field]])
    /// A note about the field (e.g. "value truncated by the capture").
    case note(String)
}

/// How an integer field is shown.
public enum FieldFormat: Sendable {
    case decimal(bytes: Int)
    case hex(bytes: Int)
    /// Two's complement, shown with a unit: `-60 dBm (0xc4)`.
    case signed(bytes: Int, unit: StaticString)
    /// Raw units times a factor: `30.00 msec (0x0018)`.
    case scaled(bytes: Int, factor: Double, unit: StaticString)
    /// A code with a name from a table: `Success (0x00)`.
    case named(bytes: Int, NameTable)
    /// A bit field whose set bits are named; unnamed set bits are shown as unknown.
    case flags(bytes: Int, NameTable)
}

/// A small table of code → name, for enumerations and bit names shown in output.
/// Lookup is linear: these tables hold a handful of entries and serve display only.
public struct NameTable: Sendable {
    public let entries: [(UInt64, StaticString)]
    /// Called for codes the table does not list (e.g. error codes in a range); may return nil.
    public let fallback: (@Sendable (UInt64) -> String?)?

    public init(_ entries: [(UInt64, StaticString)], fallback: (@Sendable (UInt64) -> String?)? = nil) {
        self.entries = entries
        self.fallback = fallback
    }

    public func name(_ code: UInt64) -> String? {
        if let s = staticName(code) { return s.description }
        return fallback?(code)
    }

    /// The table's own name for `code`, without building a String (the packet list's hot path).
    @inlinable
    public func staticName(_ code: UInt64) -> StaticString? {
        for (k, v) in entries where k == code { return v }
        return nil
    }

    /// Names of the set bits (entries are bit masks) and the bits no entry names.
    public func flagNames(_ value: UInt64) -> (names: [String], unknown: UInt64) {
        var names: [String] = []
        var rest = value
        for (mask, name) in entries where mask != 0 && value & mask == mask {
            names.append(name.description)
            rest &= ~mask
        }
        return (names, rest)
    }
}
