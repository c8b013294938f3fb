import BLEAnalysis
import BLEBytes
import BLECapture
import BLEProtocol
import BLEReport

/// One HCI packet through everything that reads a single packet: the structural check
/// (`HCIValidation`), the table-driven display decoder (`HCIDecoder`, every command, event and LE
/// subevent row), the typed fast-path decoders and their iterators, and the text/JSON renderers.
///
/// Input: byte 0 selects the packet type (`% 5 + 1`: command, ACL, SCO, event, ISO); bit 7 marks the
/// packet as cut by the capture (original length larger than the bytes). The rest is the packet.
enum HCIHarness {
    static func run(_ data: UnsafeRawBufferPointer, _ check: inout Invariants) {
        guard let selector = data.first else { return }
        guard let type = HCIPacketType(rawValue: selector % 5 + 1) else { return }
        let packet = UnsafeRawBufferPointer(rebasing: data[1...])
        let cut = selector & 0x80 != 0
        let base = 1
        let originalLength = cut ? packet.count + 7 : packet.count

        _ = HCIValidation.check(type, packet, base: base, captureTruncated: cut)
        var r = ByteReader(packet, base: base)
        let layer = HCIDecoder.decode(type, &r, originalLength: originalLength)
        checkOffsets(layer, packet: packet, base: base, &check)

        var t = ByteReader(packet, base: base)
        switch type {
        case .command:
            if case let .setAdvertisingData(_, _, range)? = try? HCICommand.decode(&t) {
                check.expect(inside(range, packet, base), "setAdvertisingData range \(range) outside the packet")
            }
        case .event:
            guard let event = try? HCIEvent.decode(&t) else { break }
            switch event {
            case let .numberOfCompletedPackets(pairs):
                var n = 0
                pairs.forEach(in: packet, base: base) { _, _ in n += 1 }
                check.expect(n <= packet.count / 4, "more completed-packet pairs (\(n)) than bytes allow")
            case let .advertisingReports(reports):
                reports.forEach(in: packet, base: base) { report in
                    check.expect(inside(report.data, packet, base), "advertising report data \(report.data) outside the packet")
                    guard inside(report.data, packet, base) else { return }
                    let start = report.data.offset - base
                    let ad = ByteReader(UnsafeRawBufferPointer(rebasing: packet[start ..< start + report.data.count]), base: report.data.offset)
                    _ = AdvertisingData.parse(ad)
                }
            case let .commandComplete(cc):
                check.expect(cc.returnParameters.offset >= base && cc.returnParameters.offset <= base + packet.count,
                             "Command Complete return parameters at \(cc.returnParameters.offset) outside the packet")
                if inside(cc.returnParameters, packet, base) || cc.returnParameters.count == 0 {
                    let start = cc.returnParameters.offset - base
                    if start >= 0, start <= packet.count {
                        var p = ByteReader(UnsafeRawBufferPointer(rebasing: packet[start...]), base: cc.returnParameters.offset)
                        _ = try? BufferSize.decode(cc.opcode, &p)
                    }
                }
            default:
                break
            }
        default:
            break
        }

        // The renderers `packets` uses, on a frame made of this packet.
        let kind: FrameKind = switch type { case .command: .command; case .acl: .aclData; case .sco: .scoData; case .event: .event; case .iso: .isoData }
        let frame = Frame(number: 1, timestamp: 1_700_000_000_000_000, direction: type == .event ? .received : .sent, kind: kind,
                          adapter: 0, recordOffset: 0, payloadOffset: base, payload: packet, originalLength: originalLength,
                          rawType: UInt16(type.rawValue))
        let layers = FrameLayers.decode(frame)
        var text = ""
        PacketText(options: RenderOptions(showKeys: selector & 0x40 != 0)).render(frame, layers: layers, status: .ok, into: &text)
        _ = PacketJSON(options: RenderOptions()).render(frame, layers: layers, status: .malformed(reason: "x", offset: base))
    }

    static func inside(_ range: ByteRange, _ packet: UnsafeRawBufferPointer, _ base: Int) -> Bool {
        range.offset >= base && range.count >= 0 && range.offset - base + range.count <= packet.count
    }

    /// A decode error points into the packet (or just past it).
    static func checkOffsets(_ layer: Layer, packet: UnsafeRawBufferPointer, base: Int, _ check: inout Invariants) {
        if let e = layer.error {
            check.expect(e.offset >= base && e.offset <= base + packet.count, "\(layer.name): error offset \(e.offset) outside the packet (\(e))")
        }
    }
}
