import BLEAnalysis
import BLECapture
import BLEProtocol
import Foundation
import TestSupport
import Testing

/// `security.plain-after-encryption` on sniffed links built here (nRF Sniffer header, link type 272, whose
/// flags say per data PDU whether it was sent encrypted, 0x04, and whether its MIC checked, 0x08). Frames:
/// 1 CONNECT_IND, then event e's central packet is frame 2 + 2e and the peripheral's answer 3 + 2e.
@Suite struct AirEncryptionRuleTests {
    static func of(_ rule: String, _ f: [Finding]) -> [Finding] { f.filter { $0.rule == rule } }

    typealias Side = (header0: UInt8, payload: [UInt8], flags: UInt8)

    static func airLink(_ events: [(central: Side, peripheral: Side)], name: String) throws -> [Finding] {
        let aa: UInt32 = 0x5065_4A27, crcInit: UInt32 = 0x2E_D45D
        var connect: [UInt8] = [0x11, 0x22, 0x33, 0x44, 0x55, 0x66] + [0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xC6]
        connect += withUnsafeBytes(of: aa.littleEndian, Array.init) + [0x5D, 0xD4, 0x2E, 2, 5, 0, 24, 0, 0, 0, 200, 0]
        connect += [0xFF, 0xFF, 0xFF, 0xFF, 0x1F, 0x07]
        let t0: Int64 = 1_700_000_000_000_000
        func air(_ event: Int64, _ s: Side, _ d: AirCaptureBuilder.Direction) -> AirCaptureBuilder.Packet {
            .init(time: t0 + event * 30_000 + (d == .peripheralToCentral ? 400 : 0),
                  bytes: AirCaptureBuilder.packet(linkType: 272, aa: aa, crcInit: crcInit, header0: s.header0, payload: s.payload,
                                                  direction: d, channel: UInt8(3 + event % 8), nordicFlags: s.flags))
        }
        var packets = [AirCaptureBuilder.Packet(time: t0 - 5_000, bytes: AirCaptureBuilder.packet(
            linkType: 272, aa: LinkLayer.advertisingAccessAddress, crcInit: LinkLayer.advertisingCRCInit, header0: 0xC5, payload: connect,
            direction: .advertising, channel: 39))]
        for (e, x) in events.enumerated() {
            packets.append(air(Int64(e), x.central, .centralToPeripheral))
            packets.append(air(Int64(e), x.peripheral, .peripheralToCentral))
        }
        let path = try AirCaptureTests.temporary("air_encryption_\(name).pcap", AirCaptureBuilder.pcap(linkType: 272, packets))
        return try AirCaptureTests.analyze(path, detect: true).1
    }

    static let empty: [UInt8] = []
    static let encReq: [UInt8] = [0x03] + Array(repeating: 0x11, count: 22)
    static let encRsp: [UInt8] = [0x04] + Array(repeating: 0x22, count: 12)
    /// An ATT Write Command (handle 0x0010) in the clear.
    static let write: [UInt8] = [0x04, 0x00, 0x04, 0x00, 0x52, 0x10, 0x00, 0x01]

    /// The encryption start (Core v5.4 Vol 6 Part B 5.1.3.1), each side acknowledging the other (SN 0x08,
    /// NESN 0x04 alternate): event 1 LL_ENC_REQ / LL_ENC_RSP in the clear, event 2 the peripheral's
    /// LL_START_ENC_REQ in the clear, event 3 both LL_START_ENC_RSPs encrypted (`startFlags`: 0x04 the
    /// sniffer cannot decrypt, 0x0C it decrypted with the MIC right; 0 a sniffer marking them plain), event
    /// 4 an encrypted data PDU from the central, then `after` at event 5.
    static func link(startFlags: UInt8, after: (central: Side, peripheral: Side)?, name: String) throws -> [Finding] {
        var events: [(central: Side, peripheral: Side)] = [
            ((0x01, empty, 0), (0x05, empty, 0)),
            ((0x0F, encReq, 0), (0x0B, encRsp, 0)),
            ((0x01, empty, 0), (0x07, [0x05], 0)),
            ((0x0F, [0x06, 1, 2, 3, 4], startFlags), (0x0B, [0x06, 5, 6, 7, 8], startFlags)),
            ((0x02, [0x9A, 0xBC, 0xDE, 0xF0, 1, 2, 3, 4, 5, 6, 7, 8], startFlags), (0x05, empty, 0)),
        ]
        if let after { events.append(after) }
        return Self.of("security.plain-after-encryption", try Self.airLink(events, name: name))
    }

    @Test func plainPDUAfterEncryptionStarted() throws {
        // Event 5 (frame 12): the central's Write Command marked not encrypted (flag 0x04 clear).
        let f = try Self.link(startFlags: 0x04, after: ((0x0E, Self.write, 0), (0x09, Self.empty, 0)), name: "plain")
        #expect(f.map(\.frames) == [[12, 8, 9]], "\(f.map(\.message))")
        #expect(f.first?.severity == .info)
        let text = f.first?.message.description ?? ""
        #expect(text.contains("the sniffer marks 1 data PDU as sent unencrypted (the first: frame 12, from the central)"), "\(text)")
        #expect(text.contains("the capture cannot tell which"), "\(text)")
    }

    @Test func micFailureAmongDecryptedPDUs() throws {
        // The sniffer decrypts (0x0C) the encryption start and the data; at event 5 the central's PDU fails its MIC (0x04).
        let f = try Self.link(startFlags: 0x0C, after: ((0x0E, [0x02, 0x7F, 0x12, 0x34, 9, 9, 9, 9], 0x04), (0x09, Self.empty, 0)), name: "mic")
        #expect(f.map(\.frames) == [[12, 8, 9]], "\(f.map(\.message))")
        #expect(f.first?.message.description.contains("1 as failing the MIC") == true, "\(f.map(\.message))")
    }

    @Test func counterExamples() throws {
        // Every PDU after the start decrypted with its MIC right: nothing.
        #expect(try Self.link(startFlags: 0x0C, after: ((0x0E, Self.write, 0x0C), (0x09, Self.empty, 0)), name: "decrypted").isEmpty)
        // A sniffer that marks the LL_START_ENC_RSPs plain too (it decrypts without saying so): nothing is judged.
        #expect(try Self.link(startFlags: 0, after: ((0x0E, Self.write, 0), (0x09, Self.empty, 0)), name: "silent").isEmpty)
        // Without the key every MIC "fails" (flag 0x08 never set): not a finding.
        #expect(try Self.link(startFlags: 0x04, after: ((0x0E, [0x02, 0x7F, 0x12, 0x34, 9, 9, 9, 9], 0x04), (0x09, Self.empty, 0)),
                              name: "nokey").isEmpty)
    }
}
