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

    /// The value spans of `att` (opcode first). `request` is the pending request a response answers,
    /// `db` the attribute table of the PDU's server.
    static func spans(_ att: ArraySlice<UInt8>, request: ATTBearer.Pending?, db: GATTDatabase?) -> [ATTValueSpan] {
        let a = Array(att)
        guard let opcode = a.first else { return [] }
        let n = a.count
        func handle(at i: Int) -> UInt16? { i + 2 <= n ? UInt16(a[i]) | UInt16(a[i + 1]) << 8 : nil }
        func span(_ start: Int, _ end: Int, _ h: UInt16?, kept: Bool) -> [ATTValueSpan] {
            end > start ? [ATTValueSpan(start: start, count: end - start, handle: h, kept: kept)] : []
        }
        switch opcode {
        case 0x0B, 0x0D:   // Read / Read Blob Response: the value of the requested handle
            let h = request?.handle
            return span(1, n, h, kept: h.map { readIsKept($0, db) } ?? false)
        case 0x09:         // Read By Type Response: length, then (handle, value) pairs
            guard n >= 2 else { return [] }
            let length = Int(a[1])
            let discovery = request?.type == .characteristic || request?.type == .include
            guard length > 2 else { return [] }
            var out: [ATTValueSpan] = []
            var i = 2
            while i + length <= n {
                out += span(i + 2, i + length, handle(at: i), kept: discovery)
                i += length
            }
            return out
        case 0x0F:         // Read Multiple Response: values, concatenated
            return span(1, n, nil, kept: false)
        case 0x21:         // Read Multiple Variable Response: (length, value) pairs
            var out: [ATTValueSpan] = []
            var i = 1
            while i + 2 <= n {
                let length = Int(a[i]) | Int(a[i + 1]) << 8
                let end = min(n, i + 2 + length)
                out += span(i + 2, end, nil, kept: false)
                i = end
            }
            return out
        case 0x12, 0x52:   // Write Request / Command: handle, value
            guard let h = handle(at: 1) else { return [] }
            return span(3, n, h, kept: n - 3 == 2 && (looksLikeCCCD(h, db) || presumedCCCD(h, a[3], a[4], db)))
        case 0xD2:         // Signed Write Command: handle, value, 12-byte signature
            guard let h = handle(at: 1), n >= 3 + 12 else { return [] }
            return span(3, n - 12, h, kept: false)
        case 0x16, 0x17:   // Prepare Write Request / Response: handle, offset, value
            guard let h = handle(at: 1) else { return [] }
            return span(5, n, h, kept: false)
        case 0x1B, 0x1D:   // Handle Value Notification / Indication: handle, value
            guard let h = handle(at: 1) else { return [] }
            return span(3, n, h, kept: false)
        case 0x23:         // Multiple Handle Value Notification: (handle, length, value) tuples
            var out: [ATTValueSpan] = []
            var i = 1
            while i + 4 <= n {
                let length = Int(a[i + 2]) | Int(a[i + 3]) << 8
                let end = min(n, i + 4 + length)
                out += span(i + 4, end, handle(at: i), kept: false)
                i = end
            }
            return out
        default:
            return []
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
    static func presumedCCCD(_ h: UInt16, _ low: UInt8, _ high: UInt8, _ db: GATTDatabase?) -> Bool {
        high == 0 && (low == 1 || low == 2) && db?.owningCharacteristic(of: h) == nil
    }

    /// `SessionModel.cccdWrite`'s test (`GATTDatabase.looksLikeCCCD`).
    static func looksLikeCCCD(_ h: UInt16, _ db: GATTDatabase?) -> Bool { db?.looksLikeCCCD(h) ?? false }
}
