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
    /// The label as the spec spells it: shown, never matched (match `id`).
    public let name: StaticString
    /// What the field is, for code that acts on it. (Declared after `name`: it fills the padding after
    /// StaticString's flag byte, so a Field is no larger than without it.)
    public let id: FieldID
    public let value: FieldValue

    @inlinable public init(_ name: StaticString, _ value: FieldValue) { (self.name, self.value, self.id) = (name, value, .unspecified) }
    @inlinable public init(_ id: FieldID, _ name: StaticString, _ value: FieldValue) { (self.name, self.value, self.id) = (name, value, id) }

    public var nameString: String { name.description }
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
    /// A note that the field's bytes do not decode: shown like a note (the error's description).
    /// Kept typed so its offset can be made a file offset when the bytes were reassembled from
    /// several fragments (`FragmentMap.fileErrors`): no renderer rewrites a sentence.
    case problem(DecodeError)
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
///
/// Every integer field decoded for display carries its table, and `packets` hands those fields from
/// the decoding thread to the rendering thread: so a table is two plain pointers, not reference-counted
/// storage. Its rows and fallback are allocated once and live as long as the process (tables are rows of
/// static decoding tables; build them once, in a `static let`, never per frame).
public struct NameTable: @unchecked Sendable {   // safe: the storage is immutable after init
    public typealias Entry = (UInt64, StaticString)
    @usableFromInline let rows: UnsafeBufferPointer<Entry>
    private let fallbackBox: Unmanaged<FallbackBox>?

    private final class FallbackBox {
        let call: @Sendable (UInt64) -> String?
        init(_ call: @escaping @Sendable (UInt64) -> String?) { self.call = call }
    }

    public init(_ entries: [Entry], fallback: (@Sendable (UInt64) -> String?)? = nil) {
        let storage = UnsafeMutableBufferPointer<Entry>.allocate(capacity: max(entries.count, 1))
        _ = storage.initialize(from: entries)
        rows = UnsafeBufferPointer(rebasing: storage[0 ..< entries.count])
        fallbackBox = fallback.map { Unmanaged.passRetained(FallbackBox($0)) }
    }

    /// The rows, code → name.
    public var entries: [Entry] { Array(rows) }

    /// The name for `code`: the table's own, else the fallback's.
    public func name(_ code: UInt64) -> String? {
        if let s = staticName(code) { return s.description }
        return fallbackName(code)
    }

    /// The fallback's name for a code the table does not list (e.g. error codes in a range); may be nil.
    public func fallbackName(_ code: UInt64) -> String? {
        guard let box = fallbackBox else { return nil }
        return box._withUnsafeGuaranteedRef { $0.call(code) }
    }

    /// The table's own name for `code`, without building a String (the packet list's hot path).
    @inlinable
    public func staticName(_ code: UInt64) -> StaticString? {
        for (k, v) in rows where k == code { return v }
        return nil
    }

    /// Names of the set bits (entries are bit masks) and the bits no entry names.
    public func flagNames(_ value: UInt64) -> (names: [String], unknown: UInt64) {
        var names: [String] = []
        let rest = forEachSetFlag(value) { names.append($0.description) }
        return (names, rest)
    }

    /// Calls `body` with the name of each set bit (entries are bit masks), in table order; returns
    /// the bits no entry names.
    public func forEachSetFlag(_ value: UInt64, _ body: (StaticString) -> Void) -> UInt64 {
        var rest = value
        for (mask, name) in rows where mask != 0 && value & mask == mask {
            body(name)
            rest &= ~mask
        }
        return rest
    }
}
