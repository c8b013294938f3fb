import BLEAnalysis
import BLECapture
import BLEProtocol
import Foundation
import Testing

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
        let notes = a.session.connections.flatMap { $0.timeline.map(\.text) }
        return (a, findings, notes)
    }

    @Test("a peripheral that went silent: link lost (Connection Timeout inferred), a warning naming the silence",
          .enabled(if: AnalysisFixtures.sharedReal != nil, "../shared/captures/real is absent"))
    func peripheralSilent() throws {
        let (a, findings, _) = try #require(try Self.run(.peripheralSilent))
        let c = try #require(a.session.connections.first)
        #expect(c.disconnectReason == .connectionTimeout)
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
        #expect(a.session.connections.first?.disconnectReason == nil)
        #expect(!findings.contains { $0.severity >= .warning }, "\(findings.map(\.message.description))")
        #expect(notes.contains { $0.contains("the sniffer lost the link") }, "\(notes)")
    }

    @Test("the sniffer misses only the peripheral (the central's SN/NESN keep moving): not a silent peripheral",
          .enabled(if: AnalysisFixtures.sharedReal != nil, "../shared/captures/real is absent"))
    func snifferMissesPeripheral() throws {
        let (a, findings, notes) = try #require(try Self.run(.snifferMissesPeripheral))
        #expect(a.session.connections.first?.disconnectReason == nil)
        #expect(!findings.contains { $0.severity >= .warning }, "\(findings.map(\.message.description))")
        #expect(!notes.contains { $0.contains("went silent") })
        // The central acknowledged PDUs the sniffer never saw: the Read By Type Request of frame 189 is not
        // called unanswered by a peer that stopped (pool.unresponsive-peer), its answer was among them.
        #expect(!findings.contains { $0.rule == "pool.unresponsive-peer" })
    }
}
