import TestSupport
import BLEAnalysis
import BLECapture
import BLEProtocol
import Foundation
import Testing

/// Causes (issue 23) of the shapes Bumble cannot produce, each on a capture built here byte by byte,
/// with a counter-example: several peers lost in the same second (the phone's side), the link lost
/// while encryption starts (Encryption Change carries the loss's reason: folded into the disconnect),
/// a MIC failure, a BR/EDR Secure Simple Pairing the user rejects.
@Suite struct CauseTests {
    typealias B = PrecisionRuleTests.Builder
    static let peer2: [UInt8] = [0x02, 0x00, 0x00, 0xEE, 0xFF, 0xC0]

    /// LE Connection Complete from another peer than the builder's.
    static func connected(_ b: inout B, _ dt: Int64, handle: UInt16, peer: [UInt8]) {
        b.leConnected(dt, handle: handle, peer: peer)
    }
    static func disconnected(_ b: inout B, _ dt: Int64, handle: UInt16, reason: UInt8) {
        b.disconnected(dt, handle: handle, reason: reason)
    }
    static func cause(_ findings: [Finding], _ rule: String, frame: Int) -> FindingCause? {
        findings.first { $0.rule == rule && $0.frames.first == frame }?.cause
    }

    @Test func twoPeersLostInTheSameSecondIsThePhone() throws {
        var b = B()
        b.leConnected(1000, handle: 0x40)                                   // 1
        Self.connected(&b, 1000, handle: 0x41, peer: Self.peer2)            // 2
        b.acl(1_000_000, .received, handle: 0x40, [0x1B, 0x03, 0x00, 0x01]) // 3
        b.acl(1000, .received, handle: 0x41, [0x1B, 0x03, 0x00, 0x01])      // 4
        Self.disconnected(&b, 5_000_000, handle: 0x40, reason: 0x08)        // 5
        Self.disconnected(&b, 300_000, handle: 0x41, reason: 0x08)          // 6
        let (_, findings) = try PrecisionRuleTests.analyze(b)
        #expect(Self.cause(findings, "link.disconnect", frame: 5)?.kind == .phoneSide)
        #expect(Self.cause(findings, "link.disconnect", frame: 6)?.kind == .phoneSide)
        // Counter-example: the second loss 3 s later is its own peer's.
        var c = B()
        c.leConnected(1000, handle: 0x40)
        Self.connected(&c, 1000, handle: 0x41, peer: Self.peer2)
        c.acl(1_000_000, .received, handle: 0x40, [0x1B, 0x03, 0x00, 0x01])
        c.acl(1000, .received, handle: 0x41, [0x1B, 0x03, 0x00, 0x01])
        Self.disconnected(&c, 5_000_000, handle: 0x40, reason: 0x08)
        Self.disconnected(&c, 3_000_000, handle: 0x41, reason: 0x08)
        let (_, other) = try PrecisionRuleTests.analyze(c)
        #expect(Self.cause(other, "link.disconnect", frame: 5)?.kind == .peerSilent)
        #expect(Self.cause(other, "link.disconnect", frame: 5)?.frames.first == 3, "key frame: the peer's last packet")
        #expect(Self.cause(other, "link.disconnect", frame: 6)?.kind == .peerSilent)
    }

    /// LE Enable Encryption, then Encryption Change with Connection Timeout and the loss: one problem
    /// (the loss, with encryption pending as its cause), not an encryption error with key advice.
    @Test func lossDuringEncryptionStartIsTheLoss() throws {
        var b = B()
        b.leConnected(1000, handle: 0x40)                                                        // 1
        b.command(1000, 0x2019, [0x40, 0x00] + [UInt8](repeating: 0, count: 26))                // 2
        b.commandStatus(1000, 0x2019, 0x00)                                                      // 3
        b.encryptionChange(5_000_000, handle: 0x40, status: 0x08, enabled: false)                // 4 Encryption Change 0x08
        Self.disconnected(&b, 1000, handle: 0x40, reason: 0x08)                                  // 5
        let (_, findings) = try PrecisionRuleTests.analyze(b)
        #expect(!findings.contains { $0.rule == "security.encryption-failed" }, "\(findings.map(\.rule))")
        let loss = try #require(findings.first { $0.rule == "link.disconnect" })
        #expect(loss.cause?.kind == .llProcedure)
        #expect(loss.cause?.frames.first == 2, "key frame: the LE Enable Encryption still pending")
        #expect(loss.folded == [.init(rule: "security.encryption-failed", frames: [4])])
        // Counter-example: PIN or Key Missing is the encryption's own failure, with the bond advice.
        var c = B()
        c.leConnected(1000, handle: 0x40)
        c.command(1000, 0x2019, [0x40, 0x00] + [UInt8](repeating: 0, count: 26))
        c.commandStatus(1000, 0x2019, 0x00)
        c.encryptionChange(100_000, handle: 0x40, status: 0x06, enabled: false)
        Self.disconnected(&c, 1000, handle: 0x40, reason: 0x05)
        let (_, other) = try PrecisionRuleTests.analyze(c)
        let failed = try #require(other.first { $0.rule == "security.encryption-failed" })
        #expect(failed.cause?.kind == .keyMissing)
        #expect(failed.status == 0x06)
        #expect(!other.contains { $0.rule == "link.disconnect" }, "the disconnect is folded into the key-missing failure")
    }

    @Test func micFailure() throws {
        var b = B()
        b.leConnected(1000, handle: 0x40)
        Self.disconnected(&b, 2_000_000, handle: 0x40, reason: 0x3D)
        let (_, findings) = try PrecisionRuleTests.analyze(b)
        let loss = try #require(findings.first { $0.rule == "link.disconnect" })
        #expect(loss.cause?.kind == .micFailure)
        #expect(loss.severity == .warning)
        #expect(loss.status == 0x3D)
    }

    /// BR/EDR: Connection Complete, User Confirmation Request, the host's negative reply, Simple Pairing
    /// Complete with Authentication Failure (Core v5.4 Vol 4 Part E 7.7.42, 7.1.31, 7.7.45).
    @Test func rejectedSecureSimplePairing() throws {
        let peer = PrecisionRuleTests.peer
        var b = B()
        b.add(1000, .received, .event, [0x03, 11, 0x00, 0x0B, 0x00] + peer + [0x01, 0x00])      // 1 Connection Complete
        b.add(100_000, .received, .event, [0x33, 10] + peer + [0x40, 0xE2, 0x01, 0x00])        // 2 User Confirmation Request
        b.command(2_000_000, 0x042D, peer)                                                      // 3 negative reply
        b.add(1000, .received, .event, [0x36, 7, 0x05] + peer)                                  // 4 Simple Pairing Complete 0x05
        Self.disconnected(&b, 10_000, handle: 0x0B, reason: 0x05)                               // 5
        let (_, findings) = try PrecisionRuleTests.analyze(b)
        let failed = try #require(findings.first { $0.rule == "security.pairing-failed" })
        #expect(failed.frames == [3, 4, 2], "the negative reply first: a person declined")
        #expect(failed.severity == .info && failed.actor == .user)
        #expect(failed.status == 0x05)
        #expect(failed.cause?.kind == .pairing)
        #expect(failed.cause?.frames.first == 3, "key frame: the host's negative reply")
        // Counter-example: Simple Pairing Complete with success is no failure.
        var c = B()
        c.add(1000, .received, .event, [0x03, 11, 0x00, 0x0B, 0x00] + peer + [0x01, 0x00])
        c.add(100_000, .received, .event, [0x33, 10] + peer + [0x40, 0xE2, 0x01, 0x00])
        c.command(2_000_000, 0x042C, peer)
        c.add(1000, .received, .event, [0x36, 7, 0x00] + peer)
        let (_, ok) = try PrecisionRuleTests.analyze(c)
        #expect(!ok.contains { $0.rule.hasPrefix("security.") }, "\(ok.map(\.rule))")
    }

    /// Pairing Request (host), Pairing Response (peer), then the host's Pairing Failed with Unspecified
    /// Reason: who gave up is told by when (Core v5.4 Vol 3 Part H 3.5.1, 3.5.2, 3.5.5).
    @Test(arguments: [(Int64(50_000), "refused at once"), (Int64(6_000_000), "a person dismissing")])
    func hostGivingUpIsToldByWhen(after: Int64, says: String) throws {
        var b = B()
        b.leConnected(1000, handle: 0x40)                                                                 // 1
        b.acl(100_000, .sent, handle: 0x40, cid: 6, [0x01, 0x04, 0x00, 0x0D, 0x10, 0x07, 0x07])           // 2 Pairing Request: KeyboardDisplay, Bonding|MITM|SC
        b.acl(30_000, .received, handle: 0x40, cid: 6, [0x02, 0x03, 0x00, 0x09, 0x10, 0x07, 0x07])        // 3 Pairing Response: NoInputNoOutput, Bonding|SC
        b.acl(after, .sent, handle: 0x40, cid: 6, [0x05, 0x08])                                          // 4 Pairing Failed: Unspecified Reason
        let (_, findings) = try PrecisionRuleTests.analyze(b)
        let failed = try #require(findings.first { $0.rule == "security.pairing-failed" })
        #expect(failed.status == 0x08)
        let text = try #require(failed.cause?.text.description)
        #expect(text.contains("LE Secure Connections, Just Works"), "\(text)")
        #expect(text.contains(says), "\(text)")
    }
}
