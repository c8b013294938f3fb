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
                out.append(Sighting(address: map(report.address), eventType: report.eventType, extended: report.extended,
                                    data: Array(raw[start ..< end])))
            }
            return out
        }
    }

    var summary: String {
        let type = extended ? "extended type 0x\(Hex.pad(eventType, 4))" : (Self.legacyNames[Int(eventType)] ?? "type \(eventType)")
        return "\(address) \(type), data \(Hex.string(data.prefix(16)))\(data.count > 16 ? " …" : "")"
    }

    static let legacyNames: [Int: String] = [0: "ADV_IND", 1: "ADV_DIRECT_IND", 2: "ADV_SCAN_IND", 3: "ADV_NONCONN_IND", 4: "SCAN_RSP"]
}
