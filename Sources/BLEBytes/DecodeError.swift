/// Why bytes could not be decoded, with the field that was being read and the absolute byte offset
/// (from the start of the capture file) where it failed.
///
/// Equatable on `kind` and `offset` only (`StaticString` has no `==`), swift-asn1 style, so tests can
/// write `#expect(throws: DecodeError(kind: .truncated(needed: 2, available: 1), offset: 7, field: ""))`.
public struct DecodeError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Equatable, Sendable {
        /// The field needs `needed` bytes and only `available` are left.
        case truncated(needed: Int, available: Int)
        /// A value that the specification does not allow here.
        case invalidValue(UInt64)
        /// A length field disagrees with the bytes actually present.
        case lengthMismatch(declared: Int, actual: Int)
        /// A length exceeds a named protocol limit (see the limit's doc comment for the spec section).
        case limitExceeded(Int)
    }

    public var kind: Kind
    /// Absolute byte offset in the capture file where decoding failed.
    public var offset: Int
    /// Name of the field being read, as the spec spells it.
    public var field: StaticString

    @inlinable
    public init(kind: Kind, offset: Int, field: StaticString) {
        (self.kind, self.offset, self.field) = (kind, offset, field)
    }

    public static func == (a: Self, b: Self) -> Bool { a.kind == b.kind && a.offset == b.offset }

    /// One line a person can read: `Handle: truncated (needs 2 bytes, 1 left) at offset 0x1f`.
    public var description: String {
        let what: String
        switch kind {
        case let .truncated(needed, available): what = "truncated (needs \(needed) bytes, \(available) left)"
        case let .invalidValue(v): what = "invalid value 0x\(String(v, radix: 16))"
        case let .lengthMismatch(declared, actual): what = "length \(declared) declared, \(actual) present"
        case let .limitExceeded(n): what = "length \(n) exceeds the protocol limit"
        }
        return "\(field): \(what) at offset \(offset)"
    }
}
