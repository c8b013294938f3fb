import BLEBytes

/// Where a host command asks for a connection interval: Conn_Interval_Min and Conn_Interval_Max
/// (×1.25 ms, each followed by Max_Latency and Supervision_Timeout) of
/// - LE Create Connection (Core v5.4 Vol 4 Part E 7.8.12),
/// - LE Connection Update (7.8.18),
/// - LE Extended Create Connection v1 and v2 (7.8.66): one block per PHY set in Initiating_PHYs.
public enum ConnectionIntervalRequest {
    /// The smallest connection interval a host may ask for: 0x0006, 7.5 ms (7.8.12).
    public static let fastest: UInt16 = 0x0006

    /// Byte offsets (in the command packet, opcode included) of each Conn_Interval_Min; its
    /// Conn_Interval_Max is the next 2 bytes. Empty for other commands.
    /// - Throws: `DecodeError` when the command is cut short before an interval.
    public static func minimumOffsets(_ command: [UInt8]) throws(DecodeError) -> [Int] {
        let result = command.withUnsafeBytes { raw in Result { () throws(DecodeError) -> [Int] in
            var r = ByteReader(raw)
            let opcode = HCIOpcode(rawValue: try r.u16le("Opcode"))
            try r.skip(1, "Parameter Total Length")
            switch opcode {
            case .leCreateConnection:
                try r.skip(13, "Scan Interval, Scan Window, Filter Policy, Peer Address Type, Peer Address, Own Address Type")
                try r.skip(4, "Conn_Interval_Min, Conn_Interval_Max")
                return [r.position - 4]
            case .leConnectionUpdate:
                try r.skip(2, "Connection_Handle")
                try r.skip(4, "Conn_Interval_Min, Conn_Interval_Max")
                return [r.position - 4]
            case .leExtendedCreateConnection, .leExtendedCreateConnectionV2:
                if opcode == .leExtendedCreateConnectionV2 { try r.skip(2, "Advertising_Handle, Subevent") }
                try r.skip(9, "Initiator Filter Policy, Own Address Type, Peer Address Type, Peer Address")
                let phys = try r.u8("Initiating_PHYs")
                var out: [Int] = []
                for bit in [UInt8(0x01), 0x02, 0x04] where phys & bit != 0 {
                    try r.skip(4, "Scan_Interval, Scan_Window")
                    out.append(r.position)
                    try r.skip(12, "Conn_Interval_Min … Max_CE_Length")
                }
                return out
            default:
                return []
            }
        } }
        return try result.get()
    }

    /// The command asking for exactly `interval` (Min = Max), or nil when it asks for no interval
    /// (another command, or one cut short).
    public static func requesting(_ interval: UInt16, in command: [UInt8]) -> [UInt8]? {
        guard let offsets = try? minimumOffsets(command), !offsets.isEmpty else { return nil }
        var out = command
        for o in offsets {
            for field in [o, o + 2] {   // safe: minimumOffsets read both fields
                out[field] = UInt8(truncatingIfNeeded: interval)
                out[field + 1] = UInt8(truncatingIfNeeded: interval >> 8)
            }
        }
        return out
    }
}
