import BLEBytes

/// One row of the ATT table (btmon's `att_opcode_table`, made type-safe; STYLE 6.4): the opcode,
/// its spec name, its kind and paired response, and its parameters. The parameter list is the
/// layout: it drives display and JSON (`ATTDisplay`), the size rule the dispatcher enforces once,
/// the typed decoder's offsets (`ATTLayout`) and encoding (`ATTEncoding`).
struct ATTEntry: Sendable {
    /// Reads the PDU from the reader's cursor (the first parameter). Fixed fields are read at their
    /// row offsets without moving it; list readers move it; `ATT.decode` ends at the PDU's end.
    typealias Decode = @Sendable (inout ByteReader) throws(DecodeError) -> ATT.PDU

    let opcode: ATTOpcode
    let name: StaticString
    /// `name` as a String, made once (layer names are copied per PDU; most are too long to be
    /// small strings, which would allocate each time).
    let nameText: String
    let kind: ATTMethodKind
    /// The response a request expects (the confirmation for an indication).
    let response: ATTOpcode?
    /// The parameters after the opcode, in wire order.
    let params: [ATTParam]
    /// For each parameter, the width of the fixed ones after it (`ATTParam.tails`).
    let tails: [Int]
    /// The parameters' size rule (`ATTParam.size`).
    let size: PDUSize
    let decode: Decode

    init(_ opcode: ATTOpcode, _ name: StaticString, _ kind: ATTMethodKind, response: ATTOpcode? = nil,
         _ params: [ATTParam], decode: @escaping Decode) {
        (self.opcode, self.name, self.kind, self.response, self.params) = (opcode, name, kind, response, params)
        (size, tails, self.decode) = (ATTParam.size(params), ATTParam.tails(params), decode)
        nameText = name.description
    }
}

/// The ATT decoding table: every opcode of Core v5.4 Vol 3 Part F 3.4.8 (Table 3.37), one row
/// each, assembled from the opcode-family files (`ATTError`, `ATTDiscovery`, `ATTRead`, `ATTWrite`,
/// `ATTNotify`).
public enum ATTDecoding {
    typealias K = ATT.Key
    typealias L = ATTLayout
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
    /// The parameters of `opcode`'s row by key, in wire order (empty for an unknown opcode).
    public static func parameterKeys(_ opcode: ATTOpcode) -> [ParamKey] { index[opcode.rawValue]?.params.map(\.key) ?? [] }
}

// Shared readers for the typed decoders.
extension ATTDecoding {
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

/// The fixed ATT fields the typed decoder reads, located in their `ATTDecoding` rows by key.
/// Offsets count from the first parameter after the opcode.
enum ATTLayout {
    typealias K = ATT.Key
    typealias D = ATTDecoding
    /// Starting Handle, Ending Handle (3.4.3.1, 3.4.3.3, 3.4.4.1, 3.4.4.9: the same offsets in each).
    static let startingHandle = ATTRowField(D.handleRange, K.startingHandle)
    static let endingHandle = ATTRowField(D.handleRange, K.endingHandle)
    static func handleRange(_ r: ByteReader) throws(DecodeError) -> ATT.HandleRange {
        ATT.HandleRange(start: try startingHandle.u16(r), end: try endingHandle.u16(r))
    }
    static let errorRequestOpcode = ATTRowField(D.errorResponse, K.requestOpcodeInError)
    static let errorHandle = ATTRowField(D.errorResponse, K.attributeHandleInError)
    static let errorCode = ATTRowField(D.errorResponse, K.errorCode)
    static let clientMTU = ATTRowField(D.exchangeMTURequest, K.clientRxMTU)
    static let serverMTU = ATTRowField(D.exchangeMTUResponse, K.serverRxMTU)
    static let findByTypeValueType = ATTRowField(D.findByTypeValueRequest, K.attributeType)
    static let findByTypeValueValue = ATTRowField(D.findByTypeValueRequest, K.attributeValue)
    static let readByTypeType = ATTRowField(D.readByTypeRequest, K.attributeType)
    static let readByGroupTypeType = ATTRowField(D.readByGroupTypeRequest, K.attributeGroupType)
    static let readHandle = ATTRowField(D.readRequest, K.attributeHandle)
    static let readValue = ATTRowField(D.readResponse, K.attributeValue)
    static let readBlobHandle = ATTRowField(D.readBlobRequest, K.attributeHandle)
    static let readBlobOffset = ATTRowField(D.readBlobRequest, K.valueOffset)
    static let readBlobValue = ATTRowField(D.readBlobResponse, K.partAttributeValue)
    static let readMultipleValues = ATTRowField(D.readMultipleResponse, K.setOfValues)
    static let writeHandle = ATTRowField(D.write, K.attributeHandle)
    static let writeValue = ATTRowField(D.write, K.attributeValue)
    static let prepareHandle = ATTRowField(D.prepareWrite, K.attributeHandle)
    static let prepareOffset = ATTRowField(D.prepareWrite, K.valueOffset)
    static let prepareValue = ATTRowField(D.prepareWrite, K.partAttributeValue)
    static let executeFlags = ATTRowField(D.executeWriteRequest, K.flags)
    static let signedHandle = ATTRowField(D.signedWrite, K.attributeHandle)
    static let signedValue = ATTRowField(D.signedWrite, K.attributeValue)
    /// The Authentication Signature: from the Sign Counter to the end (Core v5.4 Vol 3 Part H 2.4.5).
    static let signCounter = ATTRowField(D.signedWrite, K.signCounter)
    static let handleValueHandle = ATTRowField(D.handleValue, K.attributeHandle)
    static let handleValueValue = ATTRowField(D.handleValue, K.attributeValue)
}
