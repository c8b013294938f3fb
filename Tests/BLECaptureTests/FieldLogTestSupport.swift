import BLECapture
import Foundation

/// Android's btsnooz, encoded the way the stack does it (AOSP `btif_debug_btsnoop.cc`): commands
/// and events whole, L2CAP signalling (CID 1) whole, other ACL cut to 14 bytes; `length` and
/// `packet_length` count the type byte; `delta` is µs since the previous record; the preamble holds
/// the newest record's µs timestamp. For fixtures built from the project's own captures.
enum BtsnoozEncoder {
    /// What the stack keeps of a packet (`btsnoop_calculate_packet_length`); nil: not logged (SCO).
    static func kept(_ r: RecordToWrite) -> [UInt8]? {
        switch r.kind {
        case .command, .event, .isoData: return r.payload
        case .aclData:
            guard r.payload.count > 8 else { return r.payload }
            let cid = UInt16(r.payload[6]) | UInt16(r.payload[7]) << 8
            return cid == 1 ? r.payload : Array(r.payload.prefix(Btsnooz.maxACLBytes))
        default: return nil
        }
    }

    /// The binary btsnooz (preamble + zlib stream) of `records`.
    static func encode(_ records: [RecordToWrite], version: UInt8 = 2) -> [UInt8] {
        var body: [UInt8] = []
        var last: Int64 = 0
        for r in records {
            guard let type = Btsnooz.type(r.kind, r.direction), let data = kept(r) else { continue }
            let length = UInt16(data.count + 1)
            let wire = UInt16((r.originalLength ?? r.payload.count) + 1)
            let delta = UInt32(last == 0 ? 0 : r.timestamp - last)
            last = r.timestamp
            body += [UInt8(length & 0xFF), UInt8(length >> 8)]
            if version == 2 { body += [UInt8(wire & 0xFF), UInt8(wire >> 8)] }
            body += [UInt8(delta & 0xFF), UInt8(delta >> 8 & 0xFF), UInt8(delta >> 16 & 0xFF), UInt8(delta >> 24), type]
            body += data
        }
        var out: [UInt8] = [version]
        withUnsafeBytes(of: UInt64(bitPattern: last).littleEndian) { out += $0 }
        return out + ZlibStream.deflate(body)
    }

    /// A dumpstate-like text with the summary between the BEGIN and END markers.
    static func dumpstate(_ snooz: [UInt8], before: String = "== dumpstate: 2024-01-01 ==\nDUMP OF SERVICE bluetooth_manager:\n",
                          after: String = "\n----- end of bluetooth_manager -----\n") -> String {
        before + "--- BEGIN:BTSNOOP_LOG_SUMMARY (\(snooz.count) bytes in) ---\n" + Btsnooz.base64Encode(snooz)
            + "\n--- END:BTSNOOP_LOG_SUMMARY ---\n" + after
    }

    /// The frames a reader must give back for `records` after btsnooz: cut ACL, original lengths kept.
    static func expected(_ records: [RecordToWrite]) -> [(kind: FrameKind, direction: Direction, payload: [UInt8], originalLength: Int, timestamp: Int64)] {
        records.compactMap { r in
            guard Btsnooz.type(r.kind, r.direction) != nil, let data = kept(r) else { return nil }
            return (r.kind, r.direction, data, r.originalLength ?? r.payload.count, r.timestamp)
        }
    }
}
