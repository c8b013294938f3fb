import BLEBytes
import Testing
@testable import BLEProtocol

/// LE Link Layer air packets (Core v5.4 Vol 6 Part B 2): pseudo-headers, advertising PDUs,
/// CONNECT_IND, data PDU headers, LL Control PDUs and the 24-bit CRC.
@Suite("Link layer")
struct LinkLayerTests {
    /// LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR record, frame 1 of bsniffhub's connection-update.pcap:
    /// PHDR channel 0, RSSI −51, flags 0x0c03 (dewhitened, signal valid, CRC checked + valid);
    /// AA 0x8e89bed6, ADV_IND TxAdd public, length 22, AdvA 04:EE:03:4A:8B:38,
    /// AD: Complete Local Name "PairingTest", Flags 0x06; CRC 0x462735.
    static let advInd = "00cd000000000000030c d6be898e 0016 388b4a03ee04 0c0950616972696e6754657374 020106 352746"

    static func parse(_ linkType: UInt32, _ hex: String) throws -> (LLAirPacket, [UInt8]) {
        let bytes = HCITest.bytes(hex)
        let p = try bytes.withUnsafeBytes { b throws(DecodeError) in try LLAirPacket.parse(linkType: linkType, b, base: 0) }
        return (p, bytes)
    }

    @Test("CRC-24 over header and payload, seeded with CRCInit, equals the captured CRC")
    func crc() throws {
        let (p, bytes) = try Self.parse(256, Self.advInd)
        #expect(p.crc == 0x462735)
        bytes.withUnsafeBytes { b in
            #expect(LinkLayer.crc(UnsafeRawBufferPointer(rebasing: b[p.pduRange]), crcInit: LinkLayer.advertisingCRCInit) == 0x462735)
            #expect(p.computedCRC(b, crcInit: LinkLayer.advertisingCRCInit) == .valid)
            #expect(p.computedCRC(b, crcInit: 0x123456) == .invalid)
        }
    }

    @Test("PHDR fields and ADV_IND")
    func phdrAdvertising() throws {
        let (p, bytes) = try Self.parse(256, Self.advInd)
        #expect(p.radio.channel == 0)
        #expect(p.radio.rssi == -51)
        #expect(p.radio.crc == .valid)
        #expect(p.radio.direction == .unknown)
        #expect(p.isAdvertising)
        #expect(p.advertisingType == 0)
        let pdu = try bytes.withUnsafeBytes { b throws(DecodeError) in try LLAdvertisingPDU.decode(p, b, base: 0) }
        guard case let .advertising(type, address, random, offset, length) = pdu else { Issue.record("\(pdu)"); return }
        #expect(type == 0 && !random)
        #expect(address == BDAddr(string: "04:EE:03:4A:8B:38"))
        #expect(Array(bytes[offset ..< offset + length]) == HCITest.bytes("0c0950616972696e6754657374020106"))
        let layers = bytes.withUnsafeBytes { LinkLayerDisplay.layers(linkType: 256, $0, base: 0) }
        #expect(layers.map(\.name) == ["LE LL PHDR", "ADV_IND"])
        #expect(layers.allSatisfy { $0.error == nil })
    }

    /// CONNECT_IND on link type 251 (no pseudo-header): InitA 11:22:33:44:55:66 (public),
    /// AdvA C0:FF:EE:00:00:01 (random), AA 0xaf9a9d2b, CRCInit 0x0bad55, WinSize 2, WinOffset 5,
    /// Interval 24 (30 ms), Latency 0, Timeout 72 (720 ms), ChM all 37, Hop 7, SCA 5.
    static let connectInd = "d6be898e 8522 665544332211 010000eeffc0 2b9d9aaf 55ad0b 02 0500 1800 0000 4800 ffffffff1f a7 000000"

    @Test("CONNECT_IND LLData")
    func connectIndication() throws {
        let (p, bytes) = try Self.parse(251, Self.connectInd)
        let pdu = try bytes.withUnsafeBytes { b throws(DecodeError) in try LLAdvertisingPDU.decode(p, b, base: 0) }
        let expected = LLConnectIndication(initiator: BDAddr(0x1122_3344_5566), initiatorRandom: false,
                                           advertiser: BDAddr(0xC0FF_EE00_0001), advertiserRandom: true,
                                           accessAddress: 0xAF9A_9D2B, crcInit: 0x0B_AD55, windowSize: 2, windowOffset: 5,
                                           intervalUnits: 24, latency: 0, timeoutUnits: 72, channelMap: 0x1F_FFFF_FFFF, hop: 7, sca: 5)
        #expect(pdu == .connect(expected))
        #expect(expected.usedChannels == 37)
        #expect(LinkLayerDisplay.channelList(0x1F_FFFF_FFFF) == "0-36 (37 channels)")
        #expect(LinkLayerDisplay.channelList(0x1F_FFFF_FDFF) == "0-8, 10-36 (36 channels)")
    }

    @Test("LL Control PDUs", arguments: [
        // LL_CONNECTION_UPDATE_IND: WinSize 1, WinOffset 0, Interval 160, Latency 0, Timeout 600, Instant 74
        ("00 01 0000 a000 0000 5802 4a00", LLControlPDU.connectionUpdate(windowSize: 1, windowOffset: 0, intervalUnits: 160, latency: 0, timeoutUnits: 600, instant: 74)),
        ("02 13", .terminate(reason: 0x13)),
        ("0c 09 0f00 0d41", .version(version: 9, company: 0x000F, subversion: 0x410D)),
        ("15 fb00 4808 fb00 4808", .lengthResponse(rxOctets: 251, rxTime: 2120, txOctets: 251, txTime: 2120)),
        ("18 02 02 2000", .phyUpdate(centralToPeripheral: 2, peripheralToCentral: 2, instant: 32)),
        ("05", .startEncryptionRequest),
        ("08 ff59000000000000", .featureRequest(0x59FF)),
        ("7f 01", .other(opcode: 0x7F)),
    ])
    func control(hex: String, expected: LLControlPDU) throws {
        let bytes = HCITest.bytes(hex)
        let pdu = try bytes.withUnsafeBytes { b throws(DecodeError) in
            var r = ByteReader(b)
            return try LLControlPDU.decode(&r)
        }
        #expect(pdu == expected)
        // Every prefix shorter than the PDU fails with a field name, never traps.
        for n in 0 ..< bytes.count {
            let short = Array(bytes.prefix(n))
            _ = short.withUnsafeBytes { b -> LLControlPDU? in var r = ByteReader(b); return try? LLControlPDU.decode(&r) }
        }
    }

    /// nRF Sniffer (link type 272, protocol version 3): board 0, payload length, version 3,
    /// counter, id 0x06 (data), header length 10, flags 0x03 (CRC ok, central → peripheral),
    /// channel 12, RSSI −60, event counter 5, timestamp; then an empty data PDU and its CRC.
    static let nordic = "00 1300 03 0100 06 0a 03 0c 3c 0500 10270000 2b9d9aaf 0100 aabbcc"

    @Test("nRF Sniffer header: direction, channel, RSSI, CRC flag, data PDU header")
    func nordicHeader() throws {
        let (p, _) = try Self.parse(272, Self.nordic)
        #expect(p.radio.direction == .centralToPeripheral)
        #expect(p.radio.channel == 12)
        #expect(p.radio.rssi == -60)
        #expect(p.radio.crc == .valid)
        #expect(p.radio.eventCounter == 5)
        #expect(p.accessAddress == 0xAF9A_9D2B)
        #expect(!p.isAdvertising)
        #expect(p.llid == 1 && p.payloadLength == 0 && !p.sn && !p.nesn)
        #expect(p.crc == 0xCCBBAA)
    }

    @Test("every prefix of every vector and 10k seeded random records parse or fail cleanly")
    func robustness() {
        var rng = HCITestSplitMix64(seed: 0x11AA)
        var inputs: [(UInt32, [UInt8])] = []
        for (lt, hex) in [(UInt32(256), Self.advInd), (251, Self.connectInd), (272, Self.nordic)] {
            let b = HCITest.bytes(hex)
            for n in 0 ... b.count { inputs.append((lt, Array(b.prefix(n)))) }
            // The whole vector parses; the empty record does not.
            #expect(b.withUnsafeBytes { (try? LLAirPacket.parse(linkType: lt, $0, base: 0)) != nil }, "\(lt) \(hex)")
            #expect([UInt8]().withUnsafeBytes { (try? LLAirPacket.parse(linkType: lt, $0, base: 0)) == nil }, "\(lt)")
        }
        var parsed = 0, refused = 0
        for _ in 0 ..< 10_000 {
            let n = Int.random(in: 0 ... 64, using: &rng)
            let lt: UInt32 = [251, 256, 272].randomElement(using: &rng) ?? 251
            inputs.append((lt, (0 ..< n).map { _ in UInt8.random(in: 0 ... 255, using: &rng) }))
        }
        for (lt, bytes) in inputs {
            bytes.withUnsafeBytes { b in
                _ = LinkLayerDisplay.layers(linkType: lt, b, base: 0)
                if let p = try? LLAirPacket.parse(linkType: lt, b, base: 0) {
                    parsed += 1
                    if p.isAdvertising { _ = try? LLAdvertisingPDU.decode(p, b, base: 0) }
                } else {
                    refused += 1
                }
            }
        }
        #expect(parsed > 0 && refused > 0, "\(parsed) parsed, \(refused) refused")
    }

    @Test("the LL Control table has no duplicate opcode")
    func table() {
        #expect(LinkLayerDisplay.controlTable.duplicateCodes.isEmpty)
        #expect(LinkLayerDisplay.controlNames.name(0x02) == "LL_TERMINATE_IND")
    }
}
