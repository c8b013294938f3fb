import BLEAnalysis
import BLEProtocol
import Foundation
import TestSupport
import Testing

/// Three classes of the Coverage table that had no rule (issue 31), each on a capture built here byte by
/// byte (the real corpus has no SCO link beside LE, no peer showing both Secure Connections bits, no
/// Service Changed followed by stale handles), each with counter-examples where the rule must stay quiet.
@Suite struct HCICoverageRuleTests {
    typealias B = CaptureBuilder
    static func of(_ rule: String, _ b: B) throws -> [Finding] { try PrecisionRuleTests.analyze(b).1.filter { $0.rule == rule } }

    // MARK: radio.audio-contention

    /// An LE link writing 20-byte Write Commands; a Classic link to a headset, then an eSCO link on it
    /// (`sco`); then the controller holds one write for 1.2 s (`stall`); the eSCO link closes at the end,
    /// or (`closedBefore`) before the writes.
    static func audio(sco: Bool, stall: Bool, closedBefore: Bool = false) -> B {
        var b = B()
        b.leConnected(1000, handle: 0x40)                                                  // 1
        b.classicConnected(1000, handle: 0x0B, peer: ClassicSecurityTests.carkit)          // 2
        if sco {
            // Synchronous Connection Complete: success, handle 0x0101, eSCO (0x02), T_eSCO 12, window 2,
            // 60-byte packets, air mode transparent (0x03).
            b.event(1000, 0x2C, [0x00] + B.le16(0x0101) + ClassicSecurityTests.carkit + [0x02, 0x0C, 0x02] + B.le16(60) + B.le16(60) + [0x03])   // 3
            if closedBefore { b.disconnected(1000, handle: 0x0101, reason: 0x16) }
        }
        for _ in 0 ..< 4 { ControllerRuleTests.write(&b, 30_000); b.completed(29_000, handle: 0x40) }
        ControllerRuleTests.write(&b, 30_000)
        b.completed(stall ? 1_200_000 : 30_000, handle: 0x40)
        if sco, !closedBefore { b.disconnected(1000, handle: 0x0101, reason: 0x13) }
        return b
    }

    @Test func leLinkStalledBesideAVoiceLinkIsInformation() throws {
        let f = try Self.of("radio.audio-contention", Self.audio(sco: true, stall: true))
        #expect(f.count == 1, "\(f.map(\.message.description))")
        let hit = try #require(f.first)
        #expect(hit.severity == .info && hit.cause?.kind == .radioContention)
        // The Synchronous Connection Complete (3), the held write (12), the completion 1.2 s later (13).
        #expect(hit.frames == [3, 12, 13], "\(hit.frames)")
        #expect(hit.message.description.contains("voice (SCO/eSCO) link"), "\(hit.message)")
        // Counter-examples: no voice link; a voice link closed before the stall; no stall.
        #expect(try Self.of("radio.audio-contention", Self.audio(sco: false, stall: true)).isEmpty)
        #expect(try Self.of("radio.audio-contention", Self.audio(sco: true, stall: true, closedBefore: true)).isEmpty)
        #expect(try Self.of("radio.audio-contention", Self.audio(sco: true, stall: false)).isEmpty)
    }

    // MARK: att.stale-cache

    /// An LE link: the host discovers the peer's GATT service (Service Changed at value handle 3), the peer
    /// indicates Service Changed for 0x0010–0x0020, the host confirms, optionally discovers again
    /// (`rediscover`), then reads `handle`, answered Invalid Handle (`refused`) or with a value.
    static func serviceChanged(rediscover: Bool, handle: UInt16, refused: Bool) -> B {
        var b = B()
        b.leConnected(1000, handle: 0x40)                                                           // 1
        b.acl(10_000, .sent, handle: 0x40, [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28])              // 2 Read By Group Type
        b.acl(10_000, .received, handle: 0x40, [0x11, 0x06, 0x01, 0x00, 0x05, 0x00, 0x01, 0x18])     // 3 GATT service 1–5
        b.acl(10_000, .sent, handle: 0x40, [0x08, 0x01, 0x00, 0x05, 0x00, 0x03, 0x28])              // 4 Read By Type
        b.acl(10_000, .received, handle: 0x40, [0x09, 0x07, 0x02, 0x00, 0x20, 0x03, 0x00, 0x05, 0x2A])   // 5 Service Changed
        b.acl(500_000, .received, handle: 0x40, [0x1D, 0x03, 0x00, 0x10, 0x00, 0x20, 0x00])         // 6 indication 0x10–0x20
        b.acl(10_000, .sent, handle: 0x40, [0x1E])                                                  // 7 confirmation
        if rediscover {
            b.acl(10_000, .sent, handle: 0x40, [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28])
            b.acl(10_000, .received, handle: 0x40, [0x11, 0x06, 0x10, 0x00, 0x20, 0x00, 0x0D, 0x18])
        }
        b.acl(10_000, .sent, handle: 0x40, [0x0A] + B.le16(handle))                                 // 8 Read Request
        b.acl(10_000, .received, handle: 0x40, refused ? [0x01, 0x0A] + B.le16(handle) + [0x01] : [0x0B, 0x01, 0x02])   // 9
        b.acl(10_000, .sent, handle: 0x40, [0x52] + B.le16(handle) + [0x01])                        // 10 Write Command
        return b
    }

    @Test func handlesUsedAfterServiceChangedWithoutDiscovery() throws {
        let refused = try Self.of("att.stale-cache", Self.serviceChanged(rediscover: false, handle: 0x15, refused: true))
        #expect(refused.count == 1, "\(refused.map(\.message.description))")
        let f = try #require(refused.first)
        #expect(f.severity == .warning && f.actor == .app)
        #expect(f.frames == [8, 6, 9], "the stale read, the Service Changed indication, the Invalid Handle: \(f.frames)")
        #expect(f.message.description.contains("0x0010–0x0020") && f.message.description.contains("(2 requests)"), "\(f.message)")
        // Answered with a value: the use is seen, harm is not: information.
        let answered = try Self.of("att.stale-cache", Self.serviceChanged(rediscover: false, handle: 0x15, refused: false))
        #expect(answered.map(\.severity) == [.info])
        // Counter-examples: discovered again first; a handle outside the changed range.
        #expect(try Self.of("att.stale-cache", Self.serviceChanged(rediscover: true, handle: 0x15, refused: true)).isEmpty)
        #expect(try Self.of("att.stale-cache", Self.serviceChanged(rediscover: false, handle: 0x30, refused: true)).isEmpty)
    }
}
