import BLEBytes

/// Builds ATT PDUs (Core v5.4 Vol 3 Part F 3.4) from the decoding table (`ATTDecoding`): the row
/// lists the parameters and their widths, the caller gives values by key (`ATT.Key`), never by
/// display label or byte index (Bumble's model: one field list drives parse, print and serialise).
/// Each function returns the ATT PDU (opcode first), to be carried in an L2CAP basic frame on the
/// ATT channel (`L2CAPEncoding.basicFrame`). The named functions are the PDUs a GATT server (the
/// twin) sends; the element lists of discovery responses are laid out by `element`.
public enum ATTEncoding {
    public typealias Value = HCICommandEncoding.Value
    public typealias Failure = HCICommandEncoding.Failure
    typealias K = ATT.Key

    /// The PDU `opcode` with its parameters by key: integers for fixed fields, bytes for values,
    /// UUIDs and element lists. A parameter left out is an error, so a table change cannot
    /// silently send zeros.
    public static func pdu(_ opcode: ATTOpcode, _ values: [ParamKey: Value] = [:]) throws(Failure) -> [UInt8] {
        guard let entry = ATTDecoding.index[opcode.rawValue] else { throw .unknownCommand(UInt16(opcode.rawValue)) }
        var w = ByteWriter(capacity: 1 + entry.size.minimum)
        w.u8(opcode.rawValue)
        for p in entry.params {
            guard let value = values[p.key] else { throw .missingParameter(p.label.description) }
            switch (value, p.kind) {
            case (.int, .bytes), (.int, .uuidRest), (.int, .value), (.int, .list): throw .unsupportedSpec(p.label.description)
            case let (.int(v), _):
                guard let width = p.width else { throw .unsupportedSpec(p.label.description) }
                for i in 0 ..< width { w.u8(UInt8(truncatingIfNeeded: v >> UInt64(8 * i))) }
            case let (.bytes(b), _):
                if let width = p.width, b.count != width { throw .unsupportedSpec(p.label.description) }
                w.append(b)
            default: throw .unsupportedSpec(p.label.description)
            }
        }
        return w.bytes
    }

    /// The named PDUs below are built from static rows with every key given: a failure is a
    /// programming error in the table, caught by `ATTTests`' round trips.
    static func built(_ opcode: ATTOpcode, _ values: [ParamKey: Value]) -> [UInt8] {
        do { return try pdu(opcode, values) } catch { preconditionFailure("ATT row \(opcode): \(error)") }
    }

    /// Error Response (3.4.1.1): request opcode in error, attribute handle in error, error code.
    public static func errorResponse(request: ATTOpcode, handle: UInt16, _ error: ATTErrorCode) -> [UInt8] {
        built(.errorResponse, [K.requestOpcodeInError: .int(UInt64(request.rawValue)), K.attributeHandleInError: .int(UInt64(handle)),
                               K.errorCode: .int(UInt64(error.rawValue))])
    }

    /// Exchange MTU Response (3.4.2.2): the server's Rx MTU.
    public static func exchangeMTUResponse(serverMTU: UInt16) -> [UInt8] {
        built(.exchangeMTUResponse, [K.serverRxMTU: .int(UInt64(serverMTU))])
    }

    /// Find Information Response (3.4.3.2): format 1 (16-bit UUIDs) or 2 (128-bit); all entries
    /// must have the same width (the caller stops at the first of another width).
    public static func findInformationResponse(_ entries: [(handle: UInt16, uuid: BluetoothUUID)]) -> [UInt8] {
        let short = entries.first.map { $0.uuid.uuid16 != nil } ?? true
        var list = ByteWriter()
        for e in entries { list.u16le(e.handle); list.append(uuidBytes(e.uuid)) }
        return built(.findInformationResponse, [K.format: .int(short ? 1 : 2), K.informationData: .bytes(list.bytes)])
    }

    /// Find By Type Value Response (3.4.3.4): found attribute handle and group end handle pairs.
    public static func findByTypeValueResponse(_ ranges: [(handle: UInt16, end: UInt16)]) -> [UInt8] {
        var list = ByteWriter()
        for r in ranges { list.u16le(r.handle); list.u16le(r.end) }
        return built(.findByTypeValueResponse, [K.handlesInformationList: .bytes(list.bytes)])
    }

    /// Read By Type Response (3.4.4.2): every value has the same length (the caller ensures it).
    public static func readByTypeResponse(_ entries: [(handle: UInt16, value: [UInt8])]) -> [UInt8] {
        var list = ByteWriter()
        for e in entries { list.u16le(e.handle); list.append(e.value) }
        return built(.readByTypeResponse, [K.length: .int(UInt64(UInt8(truncatingIfNeeded: 2 + (entries.first?.value.count ?? 0)))),
                                           K.attributeDataList: .bytes(list.bytes)])
    }

    /// Read By Group Type Response (3.4.4.10): handle, end group handle, value of equal length.
    public static func readByGroupTypeResponse(_ entries: [(handle: UInt16, end: UInt16, value: [UInt8])]) -> [UInt8] {
        var list = ByteWriter()
        for e in entries { list.u16le(e.handle); list.u16le(e.end); list.append(e.value) }
        return built(.readByGroupTypeResponse, [K.length: .int(UInt64(UInt8(truncatingIfNeeded: 4 + (entries.first?.value.count ?? 0)))),
                                                K.attributeDataList: .bytes(list.bytes)])
    }

    /// Read Response / Read Blob Response (3.4.4.4, 3.4.4.6): the value, as much as fits.
    public static func readResponse(_ value: ArraySlice<UInt8>, blob: Bool = false) -> [UInt8] {
        blob ? built(.readBlobResponse, [K.partAttributeValue: .bytes(Array(value))])
             : built(.readResponse, [K.attributeValue: .bytes(Array(value))])
    }

    /// Write Response (3.4.5.2) and Execute Write Response (3.4.6.4): the opcode alone.
    public static func writeResponse() -> [UInt8] { built(.writeResponse, [:]) }
    public static func executeWriteResponse() -> [UInt8] { built(.executeWriteResponse, [:]) }

    /// Prepare Write Response (3.4.6.2): the request's handle, offset and part value echoed.
    public static func prepareWriteResponse(handle: UInt16, offset: UInt16, part: ArraySlice<UInt8>) -> [UInt8] {
        built(.prepareWriteResponse, [K.attributeHandle: .int(UInt64(handle)), K.valueOffset: .int(UInt64(offset)),
                                      K.partAttributeValue: .bytes(Array(part))])
    }

    /// Handle Value Notification / Indication (3.4.7.1, 3.4.7.2).
    public static func handleValue(_ handle: UInt16, _ value: ArraySlice<UInt8>, indication: Bool) -> [UInt8] {
        built(indication ? .handleValueIndication : .handleValueNotification,
              [K.attributeHandle: .int(UInt64(handle)), K.attributeValue: .bytes(Array(value))])
    }

    /// A UUID as ATT carries it: 2 bytes for one on the Bluetooth base, else 16, little-endian
    /// (3.2.1: 32-bit UUIDs are sent as 128-bit).
    public static func uuidBytes(_ uuid: BluetoothUUID) -> [UInt8] {
        if let short = uuid.uuid16 { return [UInt8(short & 0xFF), UInt8(short >> 8)] }
        return uuid.bigEndianBytes.reversed()
    }
}

/// L2CAP framing for what a twin sends (Core v5.4 Vol 3 Part A 3.1) and the ACL packets that carry
/// it (Vol 4 Part E 5.4.2).
public enum L2CAPEncoding {
    /// A basic frame: length, channel id, payload.
    public static func basicFrame(channel: UInt16, _ payload: [UInt8]) -> [UInt8] {
        var w = ByteWriter(capacity: payload.count + 4)
        w.u16le(UInt16(truncatingIfNeeded: payload.count)); w.u16le(channel); w.append(payload)
        return w.bytes
    }

    /// The ACL data packets (header included, no H4 indicator) carrying `pdu` on `handle`, each at
    /// most `maxLength` bytes of data: the first with Packet_Boundary_Flag 0b00 (first
    /// non-flushable, as LE requires), the rest 0b01 (continuing fragment).
    public static func aclPackets(handle: UInt16, pdu: [UInt8], maxLength: Int) -> [[UInt8]] {
        aclPackets(handle: handle, data: pdu[...], maxLength: maxLength, flags: 0x0000)
    }

    /// The ACL data packets carrying `data` (a PDU, or an ACL packet's data being split again) on
    /// `handle`, each at most `maxLength` bytes of data: the first with the Packet_Boundary and
    /// Broadcast flags `flags` (bits 12–15 of the header word), the rest continuing fragments
    /// (0b01) with the same Broadcast flags (Core v5.4 Vol 4 Part E 5.4.2).
    public static func aclPackets(handle: UInt16, data: ArraySlice<UInt8>, maxLength: Int, flags: UInt16) -> [[UInt8]] {
        let size = max(1, maxLength)
        var out: [[UInt8]] = []
        var start = data.startIndex
        repeat {
            let end = min(data.endIndex, start + size)
            let boundary = start == data.startIndex ? UInt8(truncatingIfNeeded: flags >> 12) & 0b11 : ACLHeader.continuing
            out.append(aclPacket(handle: handle, boundary: boundary, broadcast: UInt8(truncatingIfNeeded: flags >> 14) & 0b11, data[start ..< end]))
            start = end
        } while start < data.endIndex
        return out
    }

    /// One ACL data packet (header included, no H4 indicator): handle and Packet_Boundary_Flag
    /// (`ACLHeader.firstNonFlushable`, `.continuing`, `.firstFlushable`), Broadcast_Flag (0 on LE),
    /// Data_Total_Length, data.
    public static func aclPacket<C: Collection<UInt8>>(handle: UInt16, boundary: UInt8, broadcast: UInt8 = 0, _ data: C) -> [UInt8] {
        var w = ByteWriter(capacity: data.count + ACLHeader.size)
        w.u16le((handle & 0x0FFF) | UInt16(boundary & 0b11) << 12 | UInt16(broadcast & 0b11) << 14)
        w.u16le(UInt16(truncatingIfNeeded: data.count)); w.append(data)
        return w.bytes
    }
}
