import BLEBytes

/// How to read one field off the wire: the row shape of every decoding table (HCI commands,
/// events, LE subevents, L2CAP signalling, SMP, ATT), after btmon's opcode tables and Bumble's
/// field specs. One spec drives decoding for display and JSON; the analysis uses typed decoders.
public indirect enum FieldSpec: Sendable {
    /// Unsigned little-endian integer of n bytes (1…8), shown in decimal.
    case uint(Int)
    /// Unsigned little-endian integer of n bytes, shown in hex.
    case hex(Int)
    /// Signed integer of n bytes with a unit (`dBm`).
    case signed(Int, unit: StaticString)
    /// Unsigned n-byte integer in units of `factor` (`1.25`, `msec`).
    case scaled(Int, factor: Double, unit: StaticString)
    /// n-byte code named by a table.
    case named(Int, NameTable)
    /// n-byte bit field named by a table of masks.
    case flags(Int, NameTable)
    /// HCI error code (Core v5.4 Vol 1 Part F), one byte.
    case status
    /// Connection handle: 12 bits of a little-endian u16.
    case handle
    /// BD_ADDR, 6 bytes.
    case address
    /// LE address type, one byte.
    case addressType
    /// n raw bytes.
    case bytes(Int)
    /// All remaining bytes, raw.
    case rest
    /// n bytes of key material (shortened in output unless keys are requested).
    case secret(Int)
    /// n bytes of NUL-padded UTF-8 text (Local Name: 248).
    case text(Int)
    /// A nested structure.
    case group([Param])
    /// A count of `countBytes` bytes, then that many structures.
    case counted(countBytes: Int, [Param])
    /// Structures repeated until the bytes run out.
    case repeated([Param])
    /// Parameters in parallel arrays: a count byte, then for each sub-spec `count` values in a row
    /// (Number Of Completed Packets, LE Advertising Report in older specs).
    case parallel([Param])
    /// A hand-written reader for what a spec cannot express.
    case custom(@Sendable (inout ByteReader) throws(DecodeError) -> FieldValue)
}

/// A parameter's stable identifier: its name in the Core specification (`Connection_Handle`,
/// `Num_Completed_Packets`), by which encoders take values (`HCICommandEncoding`,
/// `HCIEventEncoding`). `Param.name` is display text only: renaming a label changes no encoding.
/// Unique within its parameter list (checked by `LayoutHomeTests`).
public struct ParamKey: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    @inlinable public init(_ rawValue: StaticString) { self.rawValue = rawValue.description }
    public var description: String { rawValue }
}

/// A named field in a decoding table row.
public struct Param: Sendable {
    /// The label shown (text, JSON, the replay report). Never a key.
    public let name: StaticString
    public let spec: FieldSpec
    /// What the field is (`FieldID`); a handle, status or address type spec gives its own.
    public let id: FieldID
    /// The parameter's Core specification name, on the rows something encodes; nil elsewhere.
    public let key: ParamKey?
    @inlinable public init(_ name: StaticString, _ spec: FieldSpec) { self.init(spec.impliedID, name, spec) }
    @inlinable public init(_ id: FieldID, _ name: StaticString, _ spec: FieldSpec) { (self.id, self.name, self.spec, self.key) = (id, name, spec, nil) }
    @inlinable public init(_ name: StaticString, _ spec: FieldSpec, key: StaticString) { self.init(spec.impliedID, name, spec, key: key) }
    @inlinable public init(_ id: FieldID, _ name: StaticString, _ spec: FieldSpec, key: StaticString) {
        (self.id, self.name, self.spec, self.key) = (id, name, spec, ParamKey(key))
    }
    /// A row whose keys are named constants (`SMP.Key`): the key is spelled once, where it is defined.
    init(_ name: StaticString, _ spec: FieldSpec, key: ParamKey) { self.init(id: spec.impliedID, name: name, spec: spec, key: key) }
    init(_ id: FieldID, _ name: StaticString, _ spec: FieldSpec, key: ParamKey) { self.init(id: id, name: name, spec: spec, key: key) }
    /// Any combination (tests relabel a row with it).
    init(id: FieldID, name: StaticString, spec: FieldSpec, key: ParamKey?) { (self.id, self.name, self.spec, self.key) = (id, name, spec, key) }
}

extension FieldSpec {
    /// The id a field has because of how it is read: a connection handle, an HCI status.
    @inlinable public var impliedID: FieldID {
        switch self {
        case .handle: .connectionHandle
        case .status: .status
        case .addressType: .addressType
        default: .unspecified
        }
    }
}

/// Reads fields by spec.
public enum FieldDecoder {
    /// Decodes `params` in order. On a decoding error, the fields read so far are kept in `fields`
    /// and the error is thrown to the caller with them (see `decodeAll`).
    public static func decode(_ params: [Param], _ r: inout ByteReader, into fields: inout [Field]) throws(DecodeError) {
        if let visitor = FieldVisitor.current {
            // Redaction is listening: report where addresses, keys and names lie (FieldVisitor.swift).
            for p in params { fields.append(Field(p.id, p.name, try visitor.value(p, &r))) }
            return
        }
        for p in params {
            fields.append(Field(p.id, p.name, try value(p.spec, &r)))
        }
    }

    /// Decodes `params` and reports what is left: the partial decode on error, trailing bytes.
    public static func decodeAll(_ params: [Param], _ r: inout ByteReader) -> (fields: [Field], error: DecodeError?) {
        var fields: [Field] = []
        fields.reserveCapacity(params.count)
        do {
            try decode(params, &r, into: &fields)
            return (fields, nil)
        } catch {
            return (fields, error)
        }
    }

    static func integer(_ n: Int, _ r: inout ByteReader, _ field: StaticString) throws(DecodeError) -> UInt64 {
        switch n {
        case 1: return UInt64(try r.u8(field))
        case 2: return UInt64(try r.u16le(field))
        case 3: return UInt64(try r.u24le(field))
        case 4: return UInt64(try r.u32le(field))
        case 8: return try r.u64le(field)
        default:
            var v: UInt64 = 0
            let s = try r.slice(n, field)
            for (i, b) in s.bytes.enumerated() where i < 8 { v |= UInt64(b) << UInt64(8 * i) }
            return v
        }
    }

    public static func value(_ spec: FieldSpec, _ r: inout ByteReader) throws(DecodeError) -> FieldValue {
        switch spec {
        case let .uint(n): return .integer(try integer(n, &r, "value"), .decimal(bytes: n))
        case let .hex(n): return .integer(try integer(n, &r, "value"), .hex(bytes: n))
        case let .signed(n, unit): return .integer(try integer(n, &r, "value"), .signed(bytes: n, unit: unit))
        case let .scaled(n, factor, unit): return .integer(try integer(n, &r, "value"), .scaled(bytes: n, factor: factor, unit: unit))
        case let .named(n, table): return .integer(try integer(n, &r, "value"), .named(bytes: n, table))
        case let .flags(n, table): return .integer(try integer(n, &r, "value"), .flags(bytes: n, table))
        case .status: return .integer(UInt64(try r.u8("Status")), .named(bytes: 1, HCIStatus.names))
        case .handle: return .integer(UInt64(try r.u16le("Handle") & 0x0FFF), .decimal(bytes: 2))
        case .address: return .address(try r.address("Address"), type: nil)
        case .addressType: return .integer(UInt64(try r.u8("Address Type")), .named(bytes: 1, LEAddressTypeNames.table))
        case let .bytes(n): return .bytes(try r.copy(n, "bytes"))
        case .rest: return .bytes(Array(r.rest().bytes))
        case let .secret(n): return .secret(try r.copy(n, "key"))
        case let .text(n):
            let raw = try r.copy(n, "text")
            let end = raw.firstIndex(of: 0) ?? raw.count
            return .text(String(decoding: raw[..<end], as: UTF8.self))
        case let .group(params):
            var fields: [Field] = []
            try decode(params, &r, into: &fields)
            return .group(fields)
        case let .counted(countBytes, params):
            let rawCount = try integer(countBytes, &r, "count")
            guard let count = Int(exactly: rawCount), count <= r.remaining else {
                // Every item takes at least one byte: more items than bytes cannot be right.
                throw DecodeError(kind: .invalidValue(rawCount), offset: r.absoluteOffset, field: "count")
            }
            var items: [[Field]] = []
            // Each item needs at least one byte, so `remaining` bounds what we reserve.
            items.reserveCapacity(min(count, r.remaining))
            for _ in 0..<count {
                var fields: [Field] = []
                try decode(params, &r, into: &fields)
                items.append(fields)
            }
            return .list(items)
        case let .repeated(params):
            var items: [[Field]] = []
            while !r.isAtEnd {
                let before = r.position
                var fields: [Field] = []
                try decode(params, &r, into: &fields)
                items.append(fields)
                if r.position == before { break }   // a structure that reads nothing would loop forever
            }
            return .list(items)
        case let .parallel(params):
            let count = Int(try r.u8("Num"))
            var columns: [[FieldValue]] = []
            let visitor = FieldVisitor.current
            for p in params {
                var column: [FieldValue] = []
                column.reserveCapacity(min(count, r.remaining))
                for _ in 0..<count {
                    if let visitor { column.append(try visitor.value(p, &r)) } else { column.append(try value(p.spec, &r)) }
                }
                columns.append(column)
            }
            var items: [[Field]] = []
            for i in 0..<count {
                items.append(params.indices.map { Field(params[$0].id, params[$0].name, columns[$0][i]) })
            }
            return .list(items)
        case let .custom(read):
            return try read(&r)
        }
    }
}

/// LE address type names for display.
public enum LEAddressTypeNames {
    public static let table = NameTable([
        (0, "Public"), (1, "Random"), (2, "Public Identity"), (3, "Random Identity"), (0xFF, "Anonymous"),
    ])
}
