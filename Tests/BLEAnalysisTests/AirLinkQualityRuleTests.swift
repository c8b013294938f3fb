import BLEAnalysis
import BLECapture
import BLEProtocol
import Foundation
import TestSupport
import Testing

/// `link.few-channels` and `link.retransmission-burst` on sniffed links built here (nRF-style PHDR, link
/// type 256), each with a counter-example. Frames: 1 CONNECT_IND, then event e's central packet is frame
/// 2 + 2e and the peripheral's answer 3 + 2e.
@Suite struct AirLinkQualityRuleTests {
    static func of(_ rule: String, _ f: [Finding]) -> [Finding] { f.filter { $0.rule == rule } }

    /// `events`: per connection event, the central's header byte and payload, and the peripheral's header byte.
    static func airLink(map: [UInt8], _ events: [(central: UInt8, payload: [UInt8], peripheral: UInt8)], name: String) throws -> [Finding] {
        let aa: UInt32 = 0x5065_4A27, crcInit: UInt32 = 0x2E_D45D
        var connect: [UInt8] = [0x11, 0x22, 0x33, 0x44, 0x55, 0x66] + [0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xC6]
        connect += withUnsafeBytes(of: aa.littleEndian, Array.init) + [0x5D, 0xD4, 0x2E, 2, 5, 0, 24, 0, 0, 0, 200, 0]
        connect += map + [0x07]
        let t0: Int64 = 1_700_000_000_000_000
        func air(_ event: Int64, _ header0: UInt8, _ payload: [UInt8], _ d: AirCaptureBuilder.Direction) -> AirCaptureBuilder.Packet {
            .init(time: t0 + event * 30_000 + (d == .peripheralToCentral ? 400 : 0),
                  bytes: AirCaptureBuilder.packet(linkType: 256, aa: aa, crcInit: crcInit, header0: header0, payload: payload,
                                                  direction: d, channel: UInt8(3 + event % 8)))
        }
        var packets = [AirCaptureBuilder.Packet(time: t0 - 5_000, bytes: AirCaptureBuilder.packet(
            linkType: 256, aa: LinkLayer.advertisingAccessAddress, crcInit: LinkLayer.advertisingCRCInit, header0: 0xC5, payload: connect,
            direction: .advertising, channel: 39))]
        for (e, x) in events.enumerated() {
            packets.append(air(Int64(e), x.central, x.payload, .centralToPeripheral))
            packets.append(air(Int64(e), x.peripheral, [], .peripheralToCentral))
        }
        let path = try AirCaptureTests.temporary("air_quality_\(name).pcap", AirCaptureBuilder.pcap(linkType: 256, packets))
        return try AirCaptureTests.analyze(path, detect: true).1
    }

    static let full: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0x1F]
    /// Event 0: empty PDUs both ways, the peripheral acknowledging (SN 0, NESN 1).
    static let opening: [(central: UInt8, payload: [UInt8], peripheral: UInt8)] = [(0x01, [], 0x05)]

    @Test func fewChannelsInConnectAndChannelMapIndication() throws {
        // CONNECT_IND with channels 0, 1, 32, 33 (4 of 37).
        let f = Self.of("link.few-channels", try Self.airLink(map: [0x03, 0, 0, 0, 0x03], Self.opening, name: "few4"))
        #expect(f.map(\.frames) == [[1]], "\(f.map(\.message))")
        #expect(f.first?.severity == .info)
        #expect(f.first?.message.description.contains("0-1, 32-33 (4 channels)") == true, "\(f.map(\.message))")
        // A full map, then the central's LL_CHANNEL_MAP_IND (frame 4) keeping channels 0–7 from event 9.
        let g = Self.of("link.few-channels", try Self.airLink(map: Self.full, Self.opening + [(0x0F, [0x01, 0xFF, 0, 0, 0, 0, 9, 0], 0x01)], name: "mapind"))
        #expect(g.map(\.frames) == [[4]], "\(g.map(\.message))")
        #expect(g.first?.message.description.contains("LL_CHANNEL_MAP_IND") == true)
        // Counter-example: 12 channels is not few.
        #expect(Self.of("link.few-channels", try Self.airLink(map: [0xFF, 0x0F, 0, 0, 0], Self.opening, name: "twelve")).isEmpty)
    }

    /// The central sends an ATT Write Command (SN 1) at event 1, the peripheral does not acknowledge it
    /// (its NESN stays 1) for `copies` more events, then does; the central goes on with a new PDU (SN 0).
    static func burst(_ copies: Int) throws -> [Finding] {
        let write: [UInt8] = [0x04, 0x00, 0x04, 0x00, 0x52, 0x10, 0x00, 0x01]
        var events = Self.opening
        events += Array(repeating: (central: UInt8(0x0E), payload: write, peripheral: UInt8(0x0D)), count: copies + 1)
        events[events.count - 1].peripheral = 0x09                                   // NESN 0: acknowledged
        events.append((0x06, [0x04, 0x00, 0x04, 0x00, 0x52, 0x10, 0x00, 0x02], 0x05))  // the next write, SN 0
        return Self.of("link.retransmission-burst", try Self.airLink(map: Self.full, events, name: "burst\(copies)"))
    }

    @Test func retransmissionBurst() throws {
        // Original at frame 4 (event 1), 11 copies at events 2–12, the last at frame 26.
        let f = try Self.burst(11)
        #expect(f.map(\.frames) == [[4, 26]], "\(f.map(\.message))")
        #expect(f.first?.severity == .info)
        #expect(f.first?.message.description.contains("central sent the same PDU 11 more times") == true, "\(f.map(\.message))")
        // Counter-example: 5 copies is an ordinary busy band.
        #expect(try Self.burst(5).isEmpty)
    }
}
