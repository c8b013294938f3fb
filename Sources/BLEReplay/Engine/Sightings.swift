import BLEBytes
import BLEProtocol

/// An advertising report as the `advertising` rule compares it: who, what kind of PDU, what data
/// (RSSI, count and order left out).
struct Sighting: Hashable, Sendable {
    var address: BDAddr
    var eventType: UInt16
    var extended: Bool
    var data: [UInt8]

    /// The reports of an advertising report event, addresses mapped by `map`.
    static func reports(in unit: LinkUnit, map: (BDAddr) -> BDAddr = { $0 }) -> [Sighting] {
        guard case let .event(bytes) = unit.content else { return [] }
        return bytes.withUnsafeBytes { raw in
            var r = ByteReader(raw)
            guard case let .advertisingReports(reports)? = try? HCIEvent.decode(&r) else { return [] }
            var out: [Sighting] = []
            reports.forEach(in: raw, base: 0) { report in
                let start = report.data.offset, end = report.data.offset + report.data.count
                guard start >= 0, end <= raw.count else { return }
                let (type, extended) = legacy(report.eventType, extended: report.extended)
                out.append(Sighting(address: map(report.address), eventType: type, extended: extended, data: Array(raw[start ..< end])))
            }
            return out
        }
    }

    /// A legacy advertising PDU reported in an LE Extended Advertising Report (event type bit 4)
    /// is the same PDU as in an LE Advertising Report: its legacy type, so the two forms compare
    /// equal (Core v5.4 Vol 4 Part E 7.7.65.13, the table of legacy event types).
    static func legacy(_ type: UInt16, extended: Bool) -> (UInt16, Bool) {
        guard extended, type & 0x10 != 0 else { return (type, extended) }
        switch type & 0x1F {
        case 0x13: return (0, false)          // ADV_IND
        case 0x15: return (1, false)          // ADV_DIRECT_IND
        case 0x12: return (2, false)          // ADV_SCAN_IND
        case 0x10: return (3, false)          // ADV_NONCONN_IND
        case 0x1B, 0x1A: return (4, false)    // SCAN_RSP to an ADV_IND or ADV_SCAN_IND
        default: return (type, extended)
        }
    }

    var summary: String {
        let type = extended ? "extended type 0x\(Hex.pad(eventType, 4))" : (Self.legacyNames[Int(eventType)] ?? "type \(eventType)")
        return "\(address) \(type), data \(Hex.string(data.prefix(16)))\(data.count > 16 ? " …" : "")"
    }

    static let legacyNames: [Int: String] = [0: "ADV_IND", 1: "ADV_DIRECT_IND", 2: "ADV_SCAN_IND", 3: "ADV_NONCONN_IND", 4: "SCAN_RSP"]
}
