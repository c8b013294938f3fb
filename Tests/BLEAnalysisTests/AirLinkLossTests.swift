import BLEAnalysis
import BLECapture
import BLEProtocol
import Foundation
import Testing
import TestSupport

/// A link lost without LL_TERMINATE_IND on an air capture: a peripheral that went silent (the central
/// keeps transmitting, resending its unacknowledged PDU with SN and NESN frozen, event after event)
/// is told from a sniffer that lost the link (nothing of either side while the capture goes on) and
/// from a sniffer that misses only the peripheral (the central's SN/NESN keep moving: it hears it).
/// Built from bsniffhub's real connection-update.pcap (PHDR, directions in the header): the link's
/// last answer kept is frame 149; its LL_TERMINATE_IND (282) is taken out; the advertising that
/// follows (284–288) shows the capture went on.
@Suite("Air link loss")
struct AirLinkLossTests {
    enum Variant { case peripheralSilent, snifferLost, snifferMissesPeripheral }

    static func build(_ variant: Variant) throws -> String? {
        guard let dir = AnalysisFixtures.sharedReal else { return nil }
        let path = dir.appendingPathComponent("lell_phdr_connection_update.pcap").path
        var frames: [AirCaptureBuilder.Packet] = []
        _ = try CaptureFile(path: path).read { frames.append(.init(time: $0.timestamp, bytes: Array($0.payload))) }
        let resent = frames[149].bytes   // frame 150: the central's empty PDU, SN 1 NESN 1
        var out: [AirCaptureBuilder.Packet] = []
        for (i, f) in frames.enumerated() {
            let number = i + 1
            let data = f.bytes.count > 14 && f.bytes[10 ..< 14] != [0xD6, 0xBE, 0x89, 0x8E]
            guard data, number >= 150 else { out.append(f); continue }
            if number >= 282 { continue }                                  // no LL_TERMINATE_IND
            let central = (UInt16(f.bytes[8]) | UInt16(f.bytes[9]) << 8) >> 7 & 7 == 2
            switch variant {
            case .peripheralSilent:
                if central { out.append(.init(time: f.time, bytes: [f.bytes[0]] + resent.dropFirst())) }
            case .snifferLost:
                if number == 150 { out.append(f) }
            case .snifferMissesPeripheral:
                if central { out.append(f) }
            }
        }
        return try AirCaptureTests.temporary("silent-\(variant).pcap", AirCaptureBuilder.pcap(linkType: 256, out))
    }

    static func run(_ variant: Variant) throws -> (Analyzer, [Finding], [String])? {
        guard let path = try build(variant) else { return nil }
        let a = Analyzer(detect: true)
        _ = try CaptureFile(path: path).read { a.consume($0) }
        let findings = a.finish()
        let notes = a.session.connections.flatMap { $0.timeline.compactMap(\.freeText) }
        return (a, findings, notes)
    }

    @Test("a peripheral that went silent: link lost (Connection Timeout inferred), a warning naming the silence",
          .enabled(if: AnalysisFixtures.sharedReal != nil, "../shared/captures/real is absent"))
    func peripheralSilent() throws {
        let (a, findings, _) = try #require(try Self.run(.peripheralSilent))
        let c = try #require(a.session.connections.first)
        #expect(c.lifecycle.disconnectReason == .connectionTimeout)
        let lost = findings.filter { $0.rule == "link.disconnect" && $0.severity == .warning }
        #expect(lost.count == 1, "\(findings.map(\.message.description))")
        let text = lost.first?.message.description ?? ""
        #expect(text.contains("went silent after frame 149") && text.contains("central stopped"), "\(text)")
        #expect(lost.first?.frames == [a.air.links.first?.silence?.lastFrame ?? -1])   // the central's last attempt
        #expect((a.air.links.first?.silence?.events ?? 0) >= 60)
    }

    @Test("the sniffer lost the link: no warning, the timeline says it was the sniffer",
          .enabled(if: AnalysisFixtures.sharedReal != nil, "../shared/captures/real is absent"))
    func snifferLost() throws {
        let (a, findings, notes) = try #require(try Self.run(.snifferLost))
        #expect(a.session.connections.first?.lifecycle.disconnectReason == nil)
        #expect(!findings.contains { $0.severity >= .warning }, "\(findings.map(\.message.description))")
        #expect(notes.contains { $0.contains("the sniffer lost the link") }, "\(notes)")
    }

    @Test("the sniffer misses only the peripheral (the central's SN/NESN keep moving): not a silent peripheral",
          .enabled(if: AnalysisFixtures.sharedReal != nil, "../shared/captures/real is absent"))
    func snifferMissesPeripheral() throws {
        let (a, findings, notes) = try #require(try Self.run(.snifferMissesPeripheral))
        #expect(a.session.connections.first?.lifecycle.disconnectReason == nil)
        #expect(!findings.contains { $0.severity >= .warning }, "\(findings.map(\.message.description))")
        #expect(!notes.contains { $0.contains("went silent") })
        // The central acknowledged PDUs the sniffer never saw: the Read By Type Request of frame 189 is not
        // called unanswered by a peer that stopped (pool.unresponsive-peer), its answer was among them.
        #expect(!findings.contains { $0.rule == "pool.unresponsive-peer" })
    }
}

/// Retransmissions on air are told by SN (Core v5.4 Vol 6 Part B 4.5.9): a new PDU toggles it. An
/// attack tool (or a broken stack) may keep its SN constant; then a PDU with the same bytes as the last,
/// sent after the peer acknowledged that one (its NESN moved), is new. Built from bsniffhub's real
/// connection-update.pcap: the central's SN cleared on every packet; the peripheral's Error Response of
/// frame 231 moved to frame 229 (answering and acknowledging, NESN 1, the Read By Type Request of 228),
/// and that request sent again in frame 230, answered again by 231 (each packet keeps its own header's
/// SN/NESN; CRCs recomputed).
@Suite("Air retransmissions")
struct AirRetransmissionTests {
    @Test("constant SN with the peer acknowledging: a repeated request is new, its answer has its request",
          .enabled(if: AnalysisFixtures.sharedReal != nil && Tool.available("tshark", ["-v"]), "tshark or ../shared/captures/real absent"))
    func constantSN() throws {
        let dir = try #require(AnalysisFixtures.sharedReal)
        var frames: [AirCaptureBuilder.Packet] = []
        _ = try CaptureFile(path: dir.appendingPathComponent("lell_phdr_connection_update.pcap").path).read {
            frames.append(.init(time: $0.timestamp, bytes: Array($0.payload)))
        }
        let crcInit: UInt32 = 0xE1_408E   // the CONNECT_IND's
        func withCRC(_ b: [UInt8]) -> [UInt8] {
            var b = b
            let end = 16 + Int(b[15])
            let crc = b[14 ..< end].withUnsafeBytes { LinkLayer.crc($0, crcInit: crcInit) }
            b.replaceSubrange(end ..< end + 3, with: [UInt8(crc & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc >> 16)])
            return b
        }
        func isCentralData(_ b: [UInt8]) -> Bool {
            b.count > 16 && b[10 ..< 14] != [0xD6, 0xBE, 0x89, 0x8E] && (UInt16(b[8]) | UInt16(b[9]) << 8) >> 7 & 7 == 2
        }
        let request = frames[227].bytes, answer = frames[230].bytes
        #expect(request[16] == 0x07 && answer[20] == 0x01)   // L2CAP length 7 (Read By Type Request), Error Response
        frames[229].bytes = [frames[229].bytes[0]] + request.dropFirst().prefix(13) + [(request[14] & ~0x04) | (frames[229].bytes[14] & 0x04)]
            + request.dropFirst(15)
        frames[228].bytes = [frames[228].bytes[0]] + answer.dropFirst().prefix(13) + [(answer[14] & 0x03) | (frames[228].bytes[14] & 0x0C)]
            + answer.dropFirst(15)
        for i in frames.indices where isCentralData(frames[i].bytes) { frames[i].bytes[14] &= ~0x08 }   // SN 0, always
        for i in frames.indices where frames[i].bytes.count > 16 && frames[i].bytes[10 ..< 14] != [0xD6, 0xBE, 0x89, 0x8E] {
            frames[i].bytes = withCRC(frames[i].bytes)
        }
        let path = try AirCaptureTests.temporary("constant-sn.pcap", AirCaptureBuilder.pcap(linkType: 256, frames))
        let a = Analyzer(detect: true)
        _ = try CaptureFile(path: path).read { a.consume($0) }
        let findings = a.finish()
        #expect(!findings.contains { $0.rule == "att.protocol-violation" }, "\(findings.map(\.message.description))")
        let link = try #require(a.air.links.first)
        #expect(link.ignoresSN(0) && !link.ignoresSN(1))
        #expect(a.statistics.attOpcodes[0x08] == 9 && a.statistics.attOpcodes[0x01] == 2)
        let ours = zip(a.statistics.attOpcodes, a.air.retransmittedATTOpcodes).map { $0 + $1 }
        #expect(ours == AirCaptureTests.tsharkATT(path))
    }
}
