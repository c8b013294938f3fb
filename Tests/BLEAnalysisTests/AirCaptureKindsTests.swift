import BLEAnalysis
import BLEBytes
import BLECapture
import BLEProtocol
import Foundation
import Testing
import TestSupport

/// What the capture itself is, on kinds seldom seen (issue 31): extended advertising on LE Coded,
/// H4 vendor diagnostic frames, a sniffer following a connection it did not see start, filtered exports.
@Suite("Air and log capture kinds")
struct AirCaptureKindsTests {
    static let advertiser: [UInt8] = [0x11, 0x22, 0x33, 0x44, 0x55, 0xC6]   // random static C6:55:44:33:22:11

    /// A PHDR record (link type 256): RF channel, flags (PDU type, PHY, CRC checked and valid), then the
    /// packet; on LE Coded the Coding Indicator follows the access address and the CRC covers the PDU.
    static func phdr(rfChannel: UInt8, aux: Bool, coded: Bool, aa: UInt32 = LinkLayer.advertisingAccessAddress,
                     crcInit: UInt32 = LinkLayer.advertisingCRCInit, header0: UInt8, payload: [UInt8], pduType: UInt16? = nil) -> [UInt8] {
        let pdu: [UInt8] = [header0, UInt8(payload.count)] + payload
        let crc = pdu.withUnsafeBytes { LinkLayer.crc($0, crcInit: crcInit) }
        let type: UInt16 = pduType ?? (aux ? 1 : 0)
        let flags: UInt16 = 0x0C03 | type << 7 | (coded ? 2 << 14 : 0)
        return [rfChannel, UInt8(bitPattern: -60), 0, 0] + withUnsafeBytes(of: aa.littleEndian, Array.init)
            + [UInt8(flags & 0xFF), UInt8(flags >> 8)] + withUnsafeBytes(of: aa.littleEndian, Array.init)
            + (coded ? [0x00] : []) + pdu + [UInt8(crc & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc >> 16)]
    }

    /// The Common Extended Advertising Payload (Core v5.4 Vol 6 Part B 2.3.4): AdvMode, flags, then
    /// AdvA, ADI, AuxPtr as the flags say, then AdvData.
    static func extended(mode: UInt8 = 0, advA: [UInt8]?, sid: UInt8 = 3, did: UInt16 = 0x123, auxChannel: UInt8?, data: [UInt8] = []) -> [UInt8] {
        var fields: [UInt8] = []
        var flags: UInt8 = 0x08   // ADI
        if let a = advA { flags |= 0x01; fields += a }
        let adi = did | UInt16(sid) << 12
        fields += [UInt8(adi & 0xFF), UInt8(adi >> 8)]
        if let c = auxChannel { flags |= 0x10; fields += [c, 0x64, 0x40] }   // offset 100 × 30 µs, AuxPHY Coded (2 << 13)
        let header = [flags] + fields
        return [mode << 6 | UInt8(header.count)] + header + data
    }

    static let name: [UInt8] = Array("Coded Sensor".utf8)
    /// AD: Flags, Complete Local Name, then a Manufacturer Specific Data the chain completes.
    static let firstData: [UInt8] = [0x02, 0x01, 0x06, UInt8(name.count + 1), 0x09] + name
    static let chainData: [UInt8] = [0x05, 0xFF, 0x59, 0x00, 0xAB, 0xCD]

    /// Three advertising events on LE Coded, each ADV_EXT_IND on 37 → AUX_ADV_IND (AdvA, the name) →
    /// AUX_CHAIN_IND (the rest); a fourth whose chain the sniffer lost.
    static func codedCapture() -> [UInt8] {
        var packets: [AirCaptureBuilder.Packet] = []
        var t: Int64 = 1_700_000_000_000_000
        for event in 0..<4 {
            let did = UInt16(0x100 + event)
            packets.append(.init(time: t, bytes: phdr(rfChannel: 0, aux: false, coded: true, header0: 0x07,
                                                      payload: extended(advA: nil, did: did, auxChannel: 5))))
            packets.append(.init(time: t + 3_000, bytes: phdr(rfChannel: 7, aux: true, coded: true, header0: 0x47,
                                                              payload: extended(advA: advertiser, did: did, auxChannel: 20, data: firstData))))
            if event < 3 {
                packets.append(.init(time: t + 6_000, bytes: phdr(rfChannel: 22, aux: true, coded: true, header0: 0x07,
                                                                  payload: extended(advA: nil, did: did, auxChannel: nil, data: chainData))))
            }
            t += 100_000
        }
        return AirCaptureBuilder.pcap(linkType: 256, packets)
    }

    @Test("LE Coded extended advertising: AUX_ADV_IND + AUX_CHAIN_IND make one advertiser with its name, as tshark reads them")
    func extendedAdvertisingCoded() throws {
        let path = try AirCaptureTests.temporary("coded_extended_adv.pcap", Self.codedCapture())
        let (a, _, _) = try AirCaptureTests.analyze(path)
        let list = a.session.advertisers.all
        #expect(list.count == 1)
        let adv = try #require(list.first)
        #expect(adv.address == BDAddr(0xC6_5544_3322_11))
        #expect(adv.names == ["Coded Sensor"])
        #expect(adv.extended)
        #expect(adv.companies == [0x0059])   // in the chained part: the chain was joined
        #expect(adv.reports == 4)             // one per advertising event, the cut chain too
        #expect(adv.malformed.isEmpty)
        #expect(a.air.extendedAdvertisingPackets == 11)
        #expect(a.air.extendedWithoutAdvertiser == 4)   // the ADV_EXT_INDs: no AdvA, their AUX is reported
        guard AirCaptureTests.hasTshark,
              let out = AnalysisFixtures.run("tshark", ["-r", path, "-Y", "btle.advertising_header.pdu_type == 0x07",
                                                        "-T", "fields", "-e", "btle.advertising_address"]) else { return }
        // tshark: 11 extended PDUs, AdvA in the four AUX_ADV_INDs only.
        let lines = out.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == 11)
        #expect(lines.filter { $0 == "c6:55:44:33:22:11" }.count == 4)
    }

    @Test("extended PDUs are named by channel in packets: ADV_EXT_IND, AUX_ADV_IND, AUX_CHAIN_IND")
    func extendedNames() throws {
        let path = try AirCaptureTests.temporary("coded_extended_names.pcap", Self.codedCapture())
        let file = try CaptureFile(path: path)
        var names: [String] = []
        _ = file.read { frame in
            guard let p = try? LLAirPacket.parse(linkType: UInt32(frame.rawType), frame.payload, base: frame.payloadOffset),
                  case let .extended(e)? = try? LLAdvertisingPDU.decode(p, frame.payload, base: frame.payloadOffset) else { return }
            names.append(LinkLayerDisplay.extendedName(e, primary: p.radio.primaryChannel))
        }
        #expect(names.prefix(3) == ["ADV_EXT_IND", "AUX_ADV_IND", "AUX_CHAIN_IND"])
    }

    // MARK: H4 vendor diagnostic frames

    /// A btsnoop H4 (1002) file whose records carry the given H4 indicator + bytes.
    static func btsnoop(_ records: [(indicator: UInt8, bytes: [UInt8], received: Bool)]) -> [UInt8] {
        var w = ByteWriter()
        w.append(Array("btsnoop\0".utf8)); w.u32be(1); w.u32be(1002)
        var t: UInt64 = 0x00E0_3AB4_4A67_6000
        for r in records {
            let data = [r.indicator] + r.bytes
            w.u32be(UInt32(data.count)); w.u32be(UInt32(data.count)); w.u32be(r.received ? 1 : 0); w.u32be(0)
            w.u32be(UInt32(t >> 32)); w.u32be(UInt32(t & 0xFFFF_FFFF))
            w.append(data)
            t += 1000
        }
        return w.bytes
    }

    @Test("H4 0x07 (Broadcom LMP monitor) frames are vendor diagnostic, not malformed")
    func h4Diagnostics() throws {
        let reset: [UInt8] = [0x03, 0x0C, 0x00]
        let complete: [UInt8] = [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]
        let lmp: [UInt8] = [0x2E, 0x01, 0x00, 0x0F, 0x00, 0x00, 0x00]
        let bytes = Self.btsnoop([(0x01, reset, false), (0x04, complete, true), (0x07, lmp, true), (0x07, lmp, false), (0x06, [0x00], true)])
        let path = try AirCaptureTests.temporary("h4_diag.btsnoop", bytes)
        let (a, _, _) = try AirCaptureTests.analyze(path)
        #expect(a.statistics.count(.vendorDiagnostic) == 2)
        #expect(a.statistics.h4Diagnostics == [0x07: 2])
        #expect(a.statistics.malformed == 1)   // 0x06 is no indicator anyone defines
        #expect(FrameKind.h4DiagnosticName(7) == "Broadcom diagnostic (LMP monitor)")
    }

    // MARK: A connection the sniffer did not see start; a filtered export

    /// healthy.btsnoop as a PHDR sniffer would have recorded it, without the packets `drop` rejects.
    static func sniffed(dropping drop: (AirCaptureBuilder.Packet) -> Bool) throws -> [AirCaptureBuilder.Packet] {
        let records = try CaptureFile(path: AnalysisFixtures.capture("healthy.btsnoop")).records().records
        return AirCaptureBuilder.fromHCI(records, linkType: 256).filter { !drop($0) }
    }

    /// The PDU header's first byte of a PHDR record (10-byte pseudo-header, 4-byte access address).
    static func header0(_ p: AirCaptureBuilder.Packet) -> UInt8 { p.bytes[14] }
    static func isAdvertising(_ p: AirCaptureBuilder.Packet) -> Bool { Array(p.bytes[10 ..< 14]) == [0xD6, 0xBE, 0x89, 0x8E] }

    @Test("a connection already running when the sniffer starts (no CONNECT_IND) is listed, its ATT analysed as tshark reads it")
    func connectionBeforeCapture() throws {
        let packets = try Self.sniffed { Self.isAdvertising($0) }
        let path = try AirCaptureTests.temporary("healthy_no_connect_ind.pcap", AirCaptureBuilder.pcap(linkType: 256, packets))
        let (hci, _, _) = try AirCaptureTests.analyze(AnalysisFixtures.capture("healthy.btsnoop"))
        let (a, _, _) = try AirCaptureTests.analyze(path)
        #expect(a.session.connections.count == hci.session.connections.count)
        #expect(a.session.connections.allSatisfy { $0.lifecycle.inferred })
        #expect(a.statistics.attOpcodes == hci.statistics.attOpcodes)
        #expect(AirCaptureTests.gattSummary(a) == AirCaptureTests.gattSummary(hci))
        #expect(a.session.filteredExport == nil)   // LL_TERMINATE_IND is there: not an export of data only
        // tshark is no referee here: without the CONNECT_IND it did not reassemble two responses split over
        // LL fragments (Read By Type and Read By Group Type Responses); the HCI capture the air was built from is.
        if AirCaptureTests.hasTshark, let counts = AirCaptureTests.tsharkATT(path) {
            #expect(zip(counts, a.statistics.attOpcodes).allSatisfy { $0 <= $1 })
        }
    }

    @Test("an air capture with only data PDUs is a filtered export: no sniffer losses, no concurrency claimed")
    func airFilteredExport() throws {
        let packets = try Self.sniffed { Self.isAdvertising($0) || Self.header0($0) & 0x03 == 3 }
        let path = try AirCaptureTests.temporary("healthy_data_only.pcap", AirCaptureBuilder.pcap(linkType: 256, packets))
        let (a, findings, _) = try AirCaptureTests.analyze(path, detect: true)
        #expect(a.session.filteredExport == .airDataOnly)
        let summaries = a.session.connections.flatMap(\.timeline).compactMap(\.freeText)
        #expect(summaries.contains { $0.contains("a filtered export") })
        #expect(!summaries.contains { $0.contains("missed by the sniffer") })
        #expect(!findings.contains { $0.rule == "att.timeout" })
    }

    @Test("air: an Exchange MTU Request in an LL PDU longer than its L2CAP length, answered as valid, is att.malformed-request")
    func malformedRequestOnAir() throws {
        let aa: UInt32 = 0x5065_4A27, crcInit: UInt32 = 0x2E_D45D
        var connect: [UInt8] = [0x11, 0x22, 0x33, 0x44, 0x55, 0x66] + Self.advertiser
        connect += withUnsafeBytes(of: aa.littleEndian, Array.init) + [0x5D, 0xD4, 0x2E, 2, 5, 0, 24, 0, 0, 0, 200, 0]
        connect += [0xFF, 0xFF, 0xFF, 0xFF, 0x1F, 0x07]
        // L2CAP length 3 on the ATT channel (Exchange MTU Request, MTU 247) in a 114-octet LL payload.
        let request: [UInt8] = [0x03, 0x00, 0x04, 0x00, 0x02, 0xF7, 0x00] + [UInt8](repeating: 0xA5, count: 107)
        let response: [UInt8] = [0x03, 0x00, 0x04, 0x00, 0x03, 0xF7, 0x00]
        let t0: Int64 = 1_700_000_000_000_000
        // Event k opens at t0 + k × 30 ms (the central), the peripheral answers 400 µs later.
        func air(_ event: Int64, _ header0: UInt8, _ payload: [UInt8], _ d: AirCaptureBuilder.Direction) -> AirCaptureBuilder.Packet {
            let time = t0 + event * 30_000 + (d == .peripheralToCentral ? 400 : 0)
            return .init(time: time, bytes: AirCaptureBuilder.packet(linkType: 256, aa: aa, crcInit: crcInit, header0: header0, payload: payload,
                                                                     direction: d, channel: UInt8(3 + event)))
        }
        let connectPacket = AirCaptureBuilder.Packet(time: t0 - 5_000, bytes: AirCaptureBuilder.packet(
            linkType: 256, aa: LinkLayer.advertisingAccessAddress, crcInit: LinkLayer.advertisingCRCInit, header0: 0xC5, payload: connect,
            direction: .advertising, channel: 39))
        // Headers: LLID (1 empty, 2 start), NESN 0x04, SN 0x08; each side acknowledges the other's last PDU.
        let packets = [
            connectPacket,
            air(0, 0x01, [], .centralToPeripheral), air(0, 0x05, [], .peripheralToCentral),
            air(1, 0x0E, request, .centralToPeripheral), air(1, 0x09, [], .peripheralToCentral),
            air(2, 0x01, [], .centralToPeripheral), air(2, 0x06, response, .peripheralToCentral),
            air(3, 0x0D, [], .centralToPeripheral), air(3, 0x09, [], .peripheralToCentral),
        ]
        let path = try AirCaptureTests.temporary("air_malformed_mtu.pcap", AirCaptureBuilder.pcap(linkType: 256, packets))
        let (_, findings, _) = try AirCaptureTests.analyze(path, detect: true)
        let f = findings.filter { $0.rule == "att.malformed-request" }
        #expect(f.count == 1)
        #expect(f.first?.frames.prefix(2) == [4, 7])
    }

    // MARK: Connection events counted by the nRF Sniffer's event counter

    /// An nRF Sniffer capture: a link, three answered events, then the central resending one PDU
    /// (SN and NESN frozen) 10 times 30 ms apart with no answer, then advertising 300 ms later (the
    /// capture goes on). `counters`: the event counter of each resent packet.
    static func resent(counters: [UInt16]) throws -> String {
        let aa: UInt32 = 0x5065_4A27, crcInit: UInt32 = 0x2E_D45D
        var connect: [UInt8] = [0x11, 0x22, 0x33, 0x44, 0x55, 0x66] + advertiser
        connect += withUnsafeBytes(of: aa.littleEndian, Array.init) + [0x5D, 0xD4, 0x2E, 2, 5, 0, 24, 0, 0, 0, 200, 0]
        connect += [0xFF, 0xFF, 0xFF, 0xFF, 0x1F, 0x07]
        let t0: Int64 = 1_700_000_000_000_000
        func packet(_ time: Int64, _ counter: UInt16, _ header0: UInt8, _ d: AirCaptureBuilder.Direction) -> AirCaptureBuilder.Packet {
            var bytes = AirCaptureBuilder.packet(linkType: 272, aa: aa, crcInit: crcInit, header0: header0, payload: [], direction: d, channel: 5)
            bytes[11] = UInt8(counter & 0xFF); bytes[12] = UInt8(counter >> 8)
            return .init(time: time, bytes: bytes)
        }
        var out = [AirCaptureBuilder.Packet(time: t0 - 5_000, bytes: AirCaptureBuilder.packet(
            linkType: 272, aa: LinkLayer.advertisingAccessAddress, crcInit: LinkLayer.advertisingCRCInit, header0: 0xC5, payload: connect,
            direction: .advertising, channel: 37))]
        // Events 121–123 answered: SN/NESN alternate (empty PDUs).
        let headers: [(UInt8, UInt8)] = [(0x01, 0x05), (0x0D, 0x09), (0x01, 0x05)]
        for (k, h) in headers.enumerated() {
            let t = t0 + Int64(k) * 30_000
            out.append(packet(t, UInt16(121 + k), h.0, .centralToPeripheral))
            out.append(packet(t + 400, UInt16(121 + k), h.1, .peripheralToCentral))
        }
        for (k, counter) in counters.enumerated() {
            out.append(packet(t0 + Int64(3 + k) * 30_000, counter, 0x0D, .centralToPeripheral))   // SN 1, NESN 1, never acknowledged
        }
        let later = t0 + Int64(3 + counters.count) * 30_000 + 300_000
        let adv: [UInt8] = advertiser + [0x02, 0x01, 0x06]
        out.append(.init(time: later, bytes: AirCaptureBuilder.packet(linkType: 272, aa: LinkLayer.advertisingAccessAddress,
                                                                      crcInit: LinkLayer.advertisingCRCInit, header0: 0x40, payload: adv,
                                                                      direction: .advertising, channel: 37)))
        return try AirCaptureTests.temporary("nrf_resent_\(counters.first ?? 0)_\(counters.last ?? 0).pcap", AirCaptureBuilder.pcap(linkType: 272, out))
    }

    @Test("silence is counted in connection events by the header's event counter: one event resent 10 times is not a silent peripheral")
    func silenceByEventCounter() throws {
        let moving = try Self.resent(counters: (124 ..< 134).map { UInt16($0) })
        let (_, lostFindings, _) = try AirCaptureTests.analyze(moving, detect: true)
        #expect(lostFindings.contains { $0.rule == "link.disconnect" && $0.severity == .warning && $0.message.description.contains("10 connection events") },
                "\(lostFindings.map(\.message.description))")
        let frozen = try Self.resent(counters: [UInt16](repeating: 124, count: 10))
        let (a, findings, _) = try AirCaptureTests.analyze(frozen, detect: true)
        #expect(!findings.contains { $0.rule == "link.disconnect" && $0.severity == .warning })
        #expect(!a.session.connections.flatMap(\.timeline).compactMap(\.freeText).contains { $0.contains("went silent") })
    }
}
