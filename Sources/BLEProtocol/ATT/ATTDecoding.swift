import BLEBytes

/// One row of the ATT table (btmon's `att_opcode_table`, made type-safe; STYLE 6.4): the opcode,
/// its spec name, its kind and paired response, the size rule the dispatcher enforces once, the
/// typed decoder for the analysis and the display decoder.
struct ATTEntry: Sendable {
    typealias Decode = @Sendable (inout ByteReader) throws(DecodeError) -> ATT.PDU
    typealias Display = @Sendable (inout ByteReader, ATTDisplayContext, inout [Field]) throws(DecodeError) -> Void

    let opcode: ATTOpcode
    let name: StaticString
    /// `name` as a String, made once (layer names are copied per PDU; most are too long to be
    /// small strings, which would allocate each time).
    let nameText: String
    let kind: ATTMethodKind
    /// The response a request expects (the confirmation for an indication).
    let response: ATTOpcode?
    /// The parameters after the opcode.
    let size: PDUSize
    let decode: Decode
    /// Appends fields as it reads them, so a decoding error keeps the partial decode.
    let display: Display

    init(_ opcode: ATTOpcode, _ name: StaticString, _ kind: ATTMethodKind, response: ATTOpcode? = nil,
         size: PDUSize, decode: @escaping Decode, display: @escaping Display) {
        (self.opcode, self.name, self.kind, self.response, self.size) = (opcode, name, kind, response, size)
        (self.decode, self.display) = (decode, display)
        nameText = name.description
    }
}

/// The ATT decoding table: every opcode of Core v5.4 Vol 3 Part F 3.4.8 (Table 3.37), one row
/// each, assembled from the opcode-family files (`ATTError`, `ATTDiscovery`, `ATTRead`, `ATTWrite`,
/// `ATTNotify`).
public enum ATTDecoding {
    static let rows: [ATTEntry] = controlRows + discoveryRows + readRows + writeRows + notifyRows
    static let index = ByteCodeIndex(rows) { $0.opcode.rawValue }

    /// What `ATT.decode` needs of a row, per opcode (nil: unknown). Reading an `ATTEntry` out of
    /// `index` copies its name String and two closures (a retain and a release each); this holds
    /// only the size rule and the decoder: ~60 instructions less per PDU, ~3 % of the 3M-frame
    /// main bench (callgrind).
    struct Decoder: Sendable {
        let name: StaticString
        let size: PDUSize
        let decode: ATTEntry.Decode
    }
    static let decoders: [Decoder?] = (0 ... 255).map { op in
        index[UInt8(op)].map { Decoder(name: $0.name, size: $0.size, decode: $0.decode) }
    }

    /// Response opcode → request opcode (the inverse of `ATTEntry.response`).
    static let requestForResponse: [ATTOpcode?] = {
        var map = [ATTOpcode?](repeating: nil, count: 256)
        for row in rows {
            if let rsp = row.response { map[Int(rsp.rawValue)] = row.opcode }
        }
        return map
    }()

    /// Opcode names for fields that carry an opcode (Error Response's Request Opcode In Error).
    public static let opcodeNames = NameTable([], fallback: { code in
        index[UInt8(truncatingIfNeeded: code)]?.name.description ?? "Unknown"
    })

    /// Every opcode the table knows, in spec order.
    public static var knownOpcodes: [ATTOpcode] { rows.map(\.opcode) }

    /// Opcodes with more than one row (should be empty; checked by a test).
    public static var duplicateOpcodes: [UInt8] { index.duplicateCodes }
}

// Shared readers for the typed decoders.
extension ATTDecoding {
    /// Starting Handle, Ending Handle.
    static func handleRange(_ r: inout ByteReader) throws(DecodeError) -> ATT.HandleRange {
        ATT.HandleRange(start: try r.u16le("Starting Handle"), end: try r.u16le("Ending Handle"))
    }

    /// An Attribute Type that is the rest of the PDU: a 2- or 16-byte UUID.
    /// - Throws: `.invalidValue(count)` for any other length.
    static func restUUID(_ r: inout ByteReader, _ field: StaticString) throws(DecodeError) -> BluetoothUUID {
        let n = r.remaining
        guard n == 2 || n == 16 else {
            throw DecodeError(kind: .invalidValue(UInt64(n)), offset: r.absoluteOffset, field: field)
        }
        return try r.uuid(width: n, field)
    }

    /// A Set Of Handles filling the rest of the PDU (an even number of bytes).
    static func handleSet(_ r: inout ByteReader) throws(DecodeError) -> [UInt16] {
        try evenList(r, element: 2, "Set Of Handles")
        var handles: [UInt16] = []
        handles.reserveCapacity(r.remaining / 2)   // safe: constant divisor
        while !r.isAtEnd { handles.append(try r.u16le("Handle")) }
        return handles
    }

    /// Throws when the rest of `r` is not a whole number of `element`-byte entries.
    /// `element` must be a non-zero constant or a value already checked to be non-zero.
    static func evenList(_ r: ByteReader, element: Int, _ field: StaticString) throws(DecodeError) {
        guard element > 0 else {   // never divide by a wire value without a guard (PureSwift's crash)
            throw DecodeError(kind: .invalidValue(UInt64(truncatingIfNeeded: element)), offset: r.absoluteOffset, field: field)
        }
        let n = r.remaining
        guard n % element == 0 else {
            throw DecodeError(kind: .lengthMismatch(declared: element, actual: n), offset: r.absoluteOffset, field: field)
        }
    }
}
