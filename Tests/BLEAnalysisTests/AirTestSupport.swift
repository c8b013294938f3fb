import BLEBytes
import BLECapture
import BLEProtocol
import Foundation

/// Builds over-the-air LE captures (pcap link types 256 and 272) from the project's HCI captures:
/// what a sniffer would have recorded of the same connections. LE Connection Complete becomes
/// CONNECT_IND, each ACL packet becomes LL data PDUs of at most 27 bytes (LLID 2 then 1), the host
/// is the central, Disconnection Complete becomes LL_TERMINATE_IND from the central, advertising
/// reports become ADV_IND; every packet carries a valid CRC.
enum AirCaptureBuilder {
    struct Packet {
        var time: Int64
        var bytes: [UInt8]
    }

    static func pcap(linkType: UInt32, _ packets: [Packet]) -> [UInt8] {
        var w = ByteWriter()
        w.u32le(0xa1b2_c3d4); w.u16le(2); w.u16le(4); w.u32le(0); w.u32le(0); w.u32le(65_535); w.u32le(linkType)
        for p in packets {
            w.u32le(UInt32(p.time / 1_000_000)); w.u32le(UInt32(p.time % 1_000_000))
            w.u32le(UInt32(p.bytes.count)); w.u32le(UInt32(p.bytes.count))
            w.append(p.bytes)
        }
        return w.bytes
    }

    enum Direction { case advertising, centralToPeripheral, peripheralToCentral }

    /// AA + header + payload + CRC behind the pseudo-header of `linkType`.
    static func packet(linkType: UInt32, aa: UInt32, crcInit: UInt32, header0: UInt8, payload: [UInt8], direction: Direction,
                       channel: UInt8, stripDirection: Bool = false, nordicFlags: UInt8 = 0, snifferTime: UInt32 = 0) -> [UInt8] {
        var pdu: [UInt8] = [header0, UInt8(payload.count)] + payload
        let crc = pdu.withUnsafeBytes { LinkLayer.crc($0, crcInit: crcInit) }
        pdu = withUnsafeBytes(of: aa.littleEndian, Array.init) + pdu + [UInt8(crc & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc >> 16)]
        switch linkType {
        case 256:
            let type: UInt16 = stripDirection ? 0 : direction == .centralToPeripheral ? 2 : direction == .peripheralToCentral ? 3 : 0
            let flags: UInt16 = 0x0C03 | type << 7
            return [channel, UInt8(bitPattern: -50), 0, 0] + withUnsafeBytes(of: aa.littleEndian, Array.init)
                + [UInt8(flags & 0xFF), UInt8(flags >> 8)] + pdu
        case 272:
            let isData = direction != .advertising
            // Nordic flags: 0x01 CRC OK, 0x02 central → peripheral, `nordicFlags` adds 0x04 encrypted, 0x08 MIC OK.
            let flags: UInt8 = 0x01 | (direction == .centralToPeripheral ? 0x02 : 0) | nordicFlags
            let length = UInt16(10 + pdu.count)
            return [0, UInt8(length & 0xFF), UInt8(length >> 8), 3, 0, 0, isData ? 0x06 : 0x02, 10, flags, channel, 50, 0, 0]
                + withUnsafeBytes(of: snifferTime.littleEndian, Array.init) + pdu
        default:
            return pdu
        }
    }

    /// The air capture a sniffer following every connection of `records` would have made.
    static func fromHCI(_ records: [RecordToWrite], linkType: UInt32) -> [Packet] {
        var out: [Packet] = []
        var links: [UInt16: (aa: UInt32, crcInit: UInt32, sn: [Bool])] = [:]
        var nextAA: UInt32 = 0x5065_4A27
        var channel: UInt8 = 0
        for r in records {
            var time = r.timestamp
            func emit(_ bytes: [UInt8]) { out.append(Packet(time: time, bytes: bytes)); time += 1 }
            switch r.kind {
            case .event where r.payload.count >= 3 && r.payload[0] == 0x3E && (r.payload[2] == 0x01 || r.payload[2] == 0x0A):
                let p = r.payload
                guard p.count >= 21, p[3] == 0 else { continue }
                let handle = UInt16(p[4]) | UInt16(p[5] & 0x0F) << 8
                let peerRandom = p[7] & 1
                let peer = Array(p[8 ..< 14])
                let paramsAt = p[2] == 0x0A ? 26 : 14
                guard p.count >= paramsAt + 6 else { continue }
                let params = Array(p[paramsAt ..< paramsAt + 6])
                let aa = nextAA
                nextAA &+= 0x0101_0101
                let crcInit: UInt32 = 0x2E_D45D
                links[handle] = (aa, crcInit, [false, false])
                var ll: [UInt8] = [0x11, 0x22, 0x33, 0x44, 0x55, 0x66] + peer
                ll += withUnsafeBytes(of: aa.littleEndian, Array.init) + [0x5D, 0xD4, 0x2E, 2] + [5, 0] + params
                ll += [0xFF, 0xFF, 0xFF, 0xFF, 0x1F, 0x07]
                emit(packet(linkType: linkType, aa: LinkLayer.advertisingAccessAddress, crcInit: LinkLayer.advertisingCRCInit,
                            header0: 0x05 | peerRandom << 7, payload: ll, direction: .advertising, channel: 37))
            case .event where r.payload.count >= 6 && r.payload[0] == 0x05 && r.payload[2] == 0:
                let handle = UInt16(r.payload[3]) | UInt16(r.payload[4] & 0x0F) << 8
                guard var l = links.removeValue(forKey: handle) else { continue }
                l.sn[0].toggle()
                emit(packet(linkType: linkType, aa: l.aa, crcInit: l.crcInit, header0: 0x03 | (l.sn[0] ? 0x08 : 0),
                            payload: [0x02, r.payload[5]], direction: .centralToPeripheral, channel: channel))
            case .aclData where r.payload.count >= 4:
                let word = UInt16(r.payload[0]) | UInt16(r.payload[1]) << 8
                let handle = word & 0x0FFF
                guard var l = links[handle] else { continue }
                let start = word >> 12 & 3 != 1
                let side = r.direction == .received ? 1 : 0
                let data = Array(r.payload[4...])
                var offset = 0
                repeat {
                    let chunk = Array(data[offset ..< min(offset + 27, data.count)])
                    let llid: UInt8 = start && offset == 0 ? 2 : 1
                    l.sn[side].toggle()
                    channel = (channel + 7) % 37
                    emit(packet(linkType: linkType, aa: l.aa, crcInit: l.crcInit, header0: llid | (l.sn[side] ? 0x08 : 0), payload: chunk,
                                direction: side == 0 ? .centralToPeripheral : .peripheralToCentral, channel: channel))
                    offset += 27
                } while offset < data.count
                links[handle] = l
            default:
                continue
            }
        }
        return out
    }
}
