import BLEAnalysis
import BLECapture
import BLEProtocol
import Foundation
import TestSupport
import Testing

/// BR/EDR security on the story and the key size rule (issue 31), one problem one finding, and ATT
/// pairing by Request Opcode In Error: each on a capture built here byte by byte (no capture of the
/// real corpus shows a key size below 16 or a declined Classic pairing), with a counter-example.
@Suite struct ClassicSecurityTests {
    typealias B = CaptureBuilder
    /// 00:1B:DC:00:00:02 (public), least significant byte first.
    static let carkit: [UInt8] = [0x02, 0x00, 0x00, 0xDC, 0x1B, 0x00]

    /// The first connection pairs (Secure Simple Pairing, the peer NoInputNoOutput: an unauthenticated
    /// P-192 link key), E0; each reconnection uses the stored key. Key sizes as given, one per connection.
    static func reconnections(_ sizes: [UInt8]) -> B {
        var b = B(peer: carkit)
        for (i, size) in sizes.enumerated() {
            let handle = UInt16(0x0B + i)
            b.classicConnected(1_000_000, handle: handle)                                    // Connection Complete
            if i == 0 {
                b.linkKeyRequest(100_000, found: false)                                      // Link Key Request, Negative Reply
                b.simplePairing(10_000, hostIO: 0x01, hostAuth: 0x05, peerIO: 0x03, peerAuth: 0x02)   // 6 frames
                b.linkKeyNotification(50_000, type: 0x04)                                    // unauthenticated P-192
            } else {
                b.linkKeyRequest(100_000, found: true)                                       // Link Key Request, Reply
            }
            b.event(20_000, 0x06, [0x00] + B.le16(handle))                                   // Authentication Complete
            b.encryptionChange(20_000, handle: handle, mode: 0x01)                           // E0
            b.readEncryptionKeySize(1000, handle: handle, size: size)                        // command, Command Complete
            b.disconnected(5_000_000, handle: handle, reason: 0x13)
        }
        return b
    }

    @Test func keySizeSmallerThanOnTheFirstConnectionIsADowngrade() throws {
        // Frames: 1–15 the first connection (key size at 14), 16–23 the second (22), 24–31 the third (30).
        let (a, findings) = try PrecisionRuleTests.analyze(Self.reconnections([16, 7, 7]))
        let downgrades = findings.filter { $0.rule == "security.key-size-downgrade" }
        #expect(downgrades.count == 1, "one problem, one finding: \(downgrades.map(\.message.description))")
        let f = try #require(downgrades.first)
        #expect(f.severity == .warning)
        #expect(f.frames == [22, 14], "the 7 of the second connection, then the 16 of the first")
        #expect(f.folded == [.init(rule: "security.key-size-downgrade", frames: [30])])
        #expect(f.status == 7)
        let text = f.message.description
        #expect(text.contains("unauthenticated P-192") && text.contains("E0"), "\(text)")
        // The story says what "encryption on" was.
        let first = a.session.connections[0].timeline.map(\.fact)
        #expect(first.contains(.classicPairingMethod(method: .justWorks, hostIO: .init(rawValue: 1), peerIO: .init(rawValue: 3), mitm: true, bonding: true)))
        #expect(first.contains(.linkKey(LinkKeyType(rawValue: 0x04))))
        #expect(first.contains(.classicEncryption(on: true, cipher: .e0, keySize: nil)))
        #expect(first.contains(.keySize(16, earlier: nil)))
        let second = a.session.connections[1].timeline
        #expect(second.map(\.fact).contains(.storedLinkKey(found: true)))
        #expect(second.map(\.fact).contains(.keySize(7, earlier: 16)))
        #expect(second.contains { $0.fields.keySize == 7 && $0.fields.security == .keySize })
        #expect(a.session.connections[1].encryption.linkKey == LinkKeyType(rawValue: 0x04) && a.session.connections[1].encryption.linkKeyFromEarlier)
    }

    @Test func fullKeysAreNoFindingAShortKeyAloneIsInformation() throws {
        let (_, full) = try PrecisionRuleTests.analyze(Self.reconnections([16, 16]))
        #expect(!full.contains { $0.rule == "security.key-size-downgrade" }, "\(full.map(\.rule))")
        let (_, short) = try PrecisionRuleTests.analyze(Self.reconnections([7]))
        let f = try #require(short.first { $0.rule == "security.key-size-downgrade" })
        #expect(f.severity == .info && f.frames == [14])
    }

    /// A person answered the pairing prompt with no (User Confirmation Request Negative Reply, Core
    /// v5.4 Vol 4 Part E 7.1.31): information, the user acts; without the negative reply it is an error.
    @Test func declinedClassicPairingIsTheUsersChoice() throws {
        var b = B(peer: Self.carkit)
        b.classicConnected(1000, handle: 0x0B)                                               // 1
        b.linkKeyRequest(100_000, found: false)                                              // 2, 3
        b.simplePairing(10_000, hostIO: 0x01, hostAuth: 0x05, peerIO: 0x01, peerAuth: 0x05, accept: false, status: 0x05)   // 4–9: 8 negative reply
        b.disconnected(10_000, handle: 0x0B, reason: 0x05)                                   // 10
        let (a, findings) = try PrecisionRuleTests.analyze(b)
        let f = try #require(findings.first { $0.rule == "security.pairing-failed" })
        #expect(f.severity == .info && f.actor == .user)
        #expect(f.frames == [8, 9, 7])
        #expect(!findings.contains { $0.severity >= .warning }, "\(findings.map { "\($0.rule) \($0.severity)" })")
        #expect(a.session.connections[0].timeline.contains { $0.fact == .pairingDeclined && $0.frame == 8 })
        #expect(a.session.connections[0].timeline.contains { $0.fact == .classicPairingMethod(method: .numericComparison, hostIO: .init(rawValue: 1), peerIO: .init(rawValue: 1), mitm: true, bonding: true) })
        // Counter-example: the same failure with no negative reply is an error.
        var c = B(peer: Self.carkit)
        c.classicConnected(1000, handle: 0x0B)
        c.linkKeyRequest(100_000, found: false)
        c.simplePairing(10_000, hostIO: 0x01, hostAuth: 0x05, peerIO: 0x01, peerAuth: 0x05, accept: true, status: 0x05)
        let (_, failed) = try PrecisionRuleTests.analyze(c)
        #expect(failed.contains { $0.rule == "security.pairing-failed" && $0.severity == .error })
    }

    /// The client pipelines a Read By Group Type Request and a Write Request; the server's Error Response
    /// names the Write Request (Request Opcode In Error, Core v5.4 Vol 3 Part F 3.4.1.1) and comes first.
    @Test func errorResponseAnswersTheRequestItNames() throws {
        var b = B()
        b.leConnected(1000, handle: 0x40)                                                     // 1
        b.acl(10_000, .sent, handle: 0x40, [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28])        // 2 Read By Group Type Request
        b.acl(3_000, .sent, handle: 0x40, [0x12, 0x03, 0x00, 0x01])                          // 3 Write Request 0x0003
        b.acl(30_000, .received, handle: 0x40, [0x01, 0x12, 0x03, 0x00, 0x03])               // 4 Error Response: Write Request, Write Not Permitted
        b.acl(30_000, .received, handle: 0x40, [0x11, 0x06, 0x01, 0x00, 0x05, 0x00, 0x00, 0x18])   // 5 Read By Group Type Response
        let (a, findings) = try PrecisionRuleTests.analyze(b)
        let error = try #require(findings.first { $0.rule == "att.error" })
        #expect(error.frames == [4, 3], "\(error.frames) \(error.message)")
        #expect(error.message.description.hasPrefix("Write Request failed: Write Not Permitted"), "\(error.message)")
        #expect(!findings.contains { $0.rule == "att.protocol-violation" && $0.frames.first == 5 }, "the response pairs with its request")
        #expect(a.session.connections[0].att.outstanding(from: .host) == nil)
    }

    /// The sequential rule from its first break: one finding per client, the later breaks folded in.
    @Test func pipelinedRequestsAreOneFindingFromTheFirst() throws {
        var b = B()
        b.leConnected(1000, handle: 0x40)                                                     // 1
        for _ in 0..<3 {
            b.acl(100_000, .sent, handle: 0x40, [0x0A, 0x03, 0x00])                          // Read Request
            b.acl(3_000, .sent, handle: 0x40, [0x0A, 0x05, 0x00])                            // Read Request, 3 ms later
            b.acl(30_000, .received, handle: 0x40, [0x0B, 0x01])
            b.acl(30_000, .received, handle: 0x40, [0x0B, 0x02])
        }
        let (_, findings) = try PrecisionRuleTests.analyze(b)
        let v = findings.filter { $0.rule == "att.protocol-violation" }
        #expect(v.count == 1, "\(v.map(\.message.description))")
        #expect(v.first?.frames == [3, 2])
        #expect(v.first?.folded == [.init(rule: "att.protocol-violation", frames: [7, 11])])
        #expect(v.first?.message.description.contains("2× att.protocol-violation (frames 7, 11)") == true, "\(v.first?.message.description ?? "")")
    }

    /// 40 pairings falling back to legacy with one peer are one problem.
    @Test func legacyFallbackIsOneFindingPerPeer() throws {
        var b = B()
        for i in 0..<3 {
            let h = UInt16(0x40 + i)
            b.leConnected(1_000_000, handle: h)
            b.acl(100_000, .sent, handle: h, cid: 6, [0x01, 0x04, 0x00, 0x0D, 0x10, 0x07, 0x07])   // Pairing Request: SC
            b.acl(30_000, .received, handle: h, cid: 6, [0x02, 0x03, 0x00, 0x01, 0x10, 0x07, 0x07]) // Pairing Response: no SC
            b.disconnected(1_000_000, handle: h, reason: 0x13)
        }
        let (_, findings) = try PrecisionRuleTests.analyze(b)
        let legacy = findings.filter { $0.rule == "security.legacy-pairing" }
        #expect(legacy.count == 1)
        #expect(legacy.first?.frames == [3, 2])
        #expect(legacy.first?.folded == [.init(rule: "security.legacy-pairing", frames: [7, 11])])
    }

    @Test func wellKnownVendorUUIDsAreNamed() {
        let nus = BluetoothUUID(high: 0x6E40_0001_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
        #expect(nus.gattLabel(.service) == "Nordic UART Service (6e400001-b5a3-f393-e0a9-e50e24dcca9e)")
        let unknown = BluetoothUUID(high: 0x1234_5678_9ABC_DEF0, low: 0x1234_5678_9ABC_DEF0)
        #expect(unknown.gattLabel(.characteristic) == unknown.description)
    }
}
