import BLEProtocol
import BLEReplay
import Foundation

/// Facts about a Bumble recording that tests derive expectations from, so they do not hard-code
/// frame numbers that depend on Bumble's init sequence.
struct RecordingFacts {
    let units: [LinkUnit]

    init(_ url: URL) throws { units = try Golden.units(url) }

    /// ATT PDUs on any connection with their unit.
    var att: [(unit: LinkUnit, pdu: [UInt8])] {
        units.compactMap { u in
            guard case let .l2cap(_, pdu) = u.content, pdu.count >= 5, pdu[2] == 0x04, pdu[3] == 0 else { return nil }
            return (u, Array(pdu[4...]))
        }
    }

    /// The Read Response that carried `value`.
    func readResponseFrame(value: [UInt8]) -> Int? {
        att.first { !$0.unit.fromHost && $0.pdu.first == 0x0B && Array($0.pdu.dropFirst()) == value }?.unit.frame
    }

    /// The first handle of the primary service with 16-bit UUID `uuid` (Read By Group Type Response).
    func serviceStart(_ uuid: UInt16) -> UInt16? {
        for (unit, pdu) in att where !unit.fromHost && pdu.first == 0x11 && pdu.count >= 2 {
            let length = Int(pdu[1])
            guard length >= 6 else { continue }
            var o = 2
            while o + length <= pdu.count {
                if pdu[o + 4] == UInt8(uuid & 0xFF), pdu[o + 5] == UInt8(uuid >> 8) { return UInt16(pdu[o]) | UInt16(pdu[o + 1]) << 8 }
                o += length
            }
        }
        return nil
    }

    /// Server → client ATT PDUs (not Error Responses) that concern handles at or above `start`:
    /// they list such a handle, or answer a request for one, or notify one. Removing the service
    /// that starts there changes exactly these (handles below it stay where they were).
    func serverPDUs(touchingHandlesFrom start: UInt16) -> [(frame: Int, opcode: UInt8)] {
        var lastRequestHandle: UInt16 = 0
        var out: [(Int, UInt8)] = []
        func u16(_ b: [UInt8], _ o: Int) -> UInt16 { o + 1 < b.count ? UInt16(b[o]) | UInt16(b[o + 1]) << 8 : 0 }
        for (unit, pdu) in att {
            guard let op = pdu.first else { continue }
            if unit.fromHost {
                // Requests that name a handle (or start a handle range); others (MTU) name none.
                lastRequestHandle = [0x04, 0x06, 0x08, 0x0A, 0x0C, 0x10, 0x12, 0x16].contains(op) ? u16(pdu, 1) : 0
                continue
            }
            var handles: [UInt16] = []
            switch op {
            case 0x11, 0x09:   // Read By Group Type / Read By Type Response: length, then entries
                let length = Int(pdu.count > 1 ? pdu[1] : 0)
                var o = 2
                while length > 0, o + length <= pdu.count { handles.append(u16(pdu, o)); o += length }
            case 0x05:   // Find Information Response: format, then handle + UUID
                let length = pdu.count > 1 && pdu[1] == 2 ? 18 : 4
                var o = 2
                while o + length <= pdu.count { handles.append(u16(pdu, o)); o += length }
            case 0x1B, 0x1D:
                handles.append(u16(pdu, 1))
            case 0x01:
                continue
            default:
                handles.append(lastRequestHandle)
            }
            if handles.contains(where: { $0 >= start }) || (op != 0x1B && op != 0x1D && lastRequestHandle >= start) {
                out.append((unit.frame, op))
            }
        }
        return out
    }

    /// The recorded packets (for cutting recordings).
    static func packets(_ url: URL) throws -> [RecordedPacket] { try Recording.load(path: url.path).packets }
}
