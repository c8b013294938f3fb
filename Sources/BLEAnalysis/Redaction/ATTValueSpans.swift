import BLEProtocol

/// Where the application's data lies in an ATT PDU (Core v5.4 Vol 3 Part F 3.4), and whether the
/// analysis reads it. `redact --drop-values` replaces the spans not `kept`; the summary lists the
/// printable text of the spans left in the copy.
///
/// Kept (GATT discovery and subscriptions, which the GATT rebuild and the rules read): Read By
/// Group Type responses (services), Read By Type responses to a characteristic or include
/// discovery, Find Information and Find By Type Value (UUIDs), a read of a declaration or a CCCD,
/// a 2-byte write to a CCCD (or, without discovery, to the handle after a notifiable value, as
/// `SessionModel.cccdWrite` decides; or 0x0001/0x0002 to a handle no discovery described: cached handles), and a read of the GAP Device Name (a name: replaced as one).
/// Everything else that carries a value is app data: read responses, Read By Type values of other
/// types, Read Multiple responses, writes, signed writes (the value, not its signature), prepared
/// writes, notifications, indications and multiple-handle notifications.
struct ATTValueSpan: Equatable {
    /// Offset from the ATT opcode, and length.
    var start: Int
    var count: Int
    var handle: UInt16?
    var kept: Bool
}

enum ATTValueSpans {
    static let deviceName = BluetoothUUID(uuid16: 0x2A00)
    static let declarations: Set<BluetoothUUID> = [.primaryService, .secondaryService, .include, .characteristic]

    /// The value spans of `att` (opcode first): where they lie is BLEProtocol's (`ATT.valueSpans`);
    /// whether the analysis reads them is decided here. `request` is the pending request a response
    /// answers, `db` the attribute table of the PDU's server.
    static func spans(_ att: ArraySlice<UInt8>, request: ATTBearer.Pending?, db: GATTDatabase?) -> [ATTValueSpan] {
        att.withReader { pdu in
            guard let code = pdu.getU8(at: 0) else { return [] }
            let opcode = ATTOpcode(code)
            return ATT.valueSpans(pdu).map { v in
                var handle = v.handle
                let kept: Bool
                switch opcode {
                case .readResponse, .readBlobResponse:   // the value of the requested handle
                    handle = request?.handle
                    kept = handle.map { readIsKept($0, db) } ?? false
                case .readByTypeResponse:                 // characteristic or include discovery
                    kept = request?.type == .characteristic || request?.type == .include
                case .writeRequest, .writeCommand:        // a 2-byte write to a CCCD
                    kept = v.count == 2 && v.handle.map { h in
                        looksLikeCCCD(h, db) || presumedCCCD(h, pdu.getU16le(at: v.start) ?? 0, db)
                    } ?? false
                default:
                    kept = false
                }
                return ATTValueSpan(start: v.start, count: v.count, handle: handle, kept: kept)
            }
        }
    }

    /// A read the analysis learns from: a declaration, a CCCD, or the GAP Device Name.
    static func readIsKept(_ h: UInt16, _ db: GATTDatabase?) -> Bool {
        guard let db else { return false }
        if db.isCCCD(h) { return true }
        guard let uuid = db.uuid(of: h) else { return false }
        return declarations.contains(uuid) || uuid == deviceName
    }

    /// A 2-byte write of 0x0001/0x0002 to a handle no discovery described: a client with cached handles
    /// subscribing (`SessionModel.cccdWrite` keeps it as a possible subscription; the values that follow
    /// decide). Kept: the analysis reads it, and it carries no application data.
    static func presumedCCCD(_ h: UInt16, _ value: UInt16, _ db: GATTDatabase?) -> Bool {
        (value == 1 || value == 2) && db?.owningCharacteristic(of: h) == nil
    }

    /// `SessionModel.cccdWrite`'s test (`GATTDatabase.looksLikeCCCD`).
    static func looksLikeCCCD(_ h: UInt16, _ db: GATTDatabase?) -> Bool { db?.looksLikeCCCD(h) ?? false }
}
