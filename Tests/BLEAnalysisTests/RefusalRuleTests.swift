import BLEAnalysis
import BLEBytes
import BLECapture
import BLEProtocol
import Foundation
import TestSupport
import Testing

/// `link.feature-refused` and the L2CAP signalling rules (`l2cap.*`) on captures built here, each with
/// a counter-example where the rule must stay quiet. Frame numbers are counted as tshark counts them.
@Suite struct RefusalRuleTests {
    typealias Builder = CaptureBuilder
    static func run(_ b: Builder) throws -> [Finding] { try PrecisionRuleTests.analyze(b).1 }
    static func of(_ rule: String, _ f: [Finding]) -> [Finding] { f.filter { $0.rule == rule } }
    static let le16 = Builder.le16

    /// An LE signalling command (Core v5.4 Vol 3 Part A 4): code, identifier, length, data.
    static func signal(_ b: inout Builder, _ dt: Int64, _ dir: Direction, _ code: UInt8, _ id: UInt8, _ data: [UInt8], handle: UInt16 = 0x40) {
        b.acl(dt, dir, handle: handle, cid: 5, [code, id] + le16(UInt16(data.count)) + data)
    }

    // MARK: link.feature-refused over HCI

    @Test func phyAndDataLengthRefusedOverHCI() throws {
        var b = Builder()
        b.leConnected(1000, handle: 0x40)                                    // 1
        b.command(1000, 0x2032, [0x40, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00])  // 2: LE Set PHY, 2M
        b.commandStatus(1000, 0x2032, 0x00)                                  // 3
        b.event(30_000, 0x3E, [0x0C, 0x1A, 0x40, 0x00, 0x01, 0x01])          // 4: PHY Update Complete, Unsupported Remote Feature
        b.command(1000, 0x2022, [0x40, 0x00, 0xFB, 0x00, 0x48, 0x08])        // 5: LE Set Data Length 251
        b.commandComplete(1000, 0x2022, [0x12, 0x40, 0x00])                  // 6: Invalid HCI Command Parameters
        b.event(30_000, 0x3E, [0x0C, 0x1A, 0x40, 0x00, 0x01, 0x01])          // 7: the PHY refused again
        let f = Self.of("link.feature-refused", try Self.run(b))
        #expect(f.map(\.frames) == [[4, 7], [6]], "\(f.map(\.message))")
        #expect(f.allSatisfy { $0.severity == .info && $0.connection == 0x40 })
        #expect(f.first?.status == 0x1A)
        #expect(f.first?.message.description.contains("2 times") == true, "\(f.map(\.message))")
        // Counter-example: a PHY update that collided (0x23) is link.procedure-collision's, not a refusal.
        var k = Builder()
        k.leConnected(1000, handle: 0x40)
        k.event(30_000, 0x3E, [0x0C, 0x23, 0x40, 0x00, 0x01, 0x01])
        let g = try Self.run(k)
        #expect(Self.of("link.feature-refused", g).isEmpty)
        #expect(Self.of("link.procedure-collision", g).count == 1)
    }

    // MARK: link.feature-refused on air

    /// A sniffed link (nRF-style PHDR, link type 256): CONNECT_IND, then one connection event per
    /// packet pair; `control` are LL Control PDUs (LLID 3) the peripheral sends at events 1, 2, 3.
    static func airLink(_ control: [[UInt8]]) throws -> [Finding] {
        let aa: UInt32 = 0x5065_4A27, crcInit: UInt32 = 0x2E_D45D
        var connect: [UInt8] = [0x11, 0x22, 0x33, 0x44, 0x55, 0x66] + [0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xC6]
        connect += withUnsafeBytes(of: aa.littleEndian, Array.init) + [0x5D, 0xD4, 0x2E, 2, 5, 0, 24, 0, 0, 0, 200, 0]
        connect += [0xFF, 0xFF, 0xFF, 0xFF, 0x1F, 0x07]
        let t0: Int64 = 1_700_000_000_000_000
        func air(_ event: Int64, _ header0: UInt8, _ payload: [UInt8], _ d: AirCaptureBuilder.Direction) -> AirCaptureBuilder.Packet {
            .init(time: t0 + event * 30_000 + (d == .peripheralToCentral ? 400 : 0),
                  bytes: AirCaptureBuilder.packet(linkType: 256, aa: aa, crcInit: crcInit, header0: header0, payload: payload,
                                                  direction: d, channel: UInt8(3 + event)))
        }
        var packets = [AirCaptureBuilder.Packet(time: t0 - 5_000, bytes: AirCaptureBuilder.packet(
            linkType: 256, aa: LinkLayer.advertisingAccessAddress, crcInit: LinkLayer.advertisingCRCInit, header0: 0xC5, payload: connect,
            direction: .advertising, channel: 39))]
        packets += [air(0, 0x01, [], .centralToPeripheral), air(0, 0x05, [], .peripheralToCentral)]
        // Each side acknowledges the other's last PDU: SN (0x08) and NESN (0x04) alternate.
        for (k, pdu) in control.enumerated() {
            let even = k % 2 == 0
            packets.append(air(Int64(k + 1), even ? 0x0D : 0x01, [], .centralToPeripheral))
            packets.append(air(Int64(k + 1), 0x03 | (even ? 0x00 : 0x08) | (even ? 0x00 : 0x04), pdu, .peripheralToCentral))
        }
        let path = try AirCaptureTests.temporary("air_refusal_\(control.count)_\(control.first?.first ?? 0).pcap",
                                                 AirCaptureBuilder.pcap(linkType: 256, packets))
        return try AirCaptureTests.analyze(path, detect: true).1
    }

    @Test func phyAndDataLengthRefusedOnAir() throws {
        // Frames: 1 CONNECT_IND, 2–3 event 0, 4–5 event 1 (LL_UNKNOWN_RSP to LL_PHY_REQ),
        // 6–7 event 2 (LL_REJECT_EXT_IND to LL_LENGTH_REQ, Unsupported Remote Feature 0x1A).
        let f = Self.of("link.feature-refused", try Self.airLink([[0x07, 0x16], [0x11, 0x14, 0x1A]]))
        #expect(f.map(\.frames) == [[5], [7]], "\(f.map(\.message))")
        #expect(f.first?.message.description.contains("LL_UNKNOWN_RSP") == true)
        #expect(f.last?.status == 0x1A)
        // Counter-example: LL_REJECT_EXT_IND to LL_PHY_REQ with LL Procedure Collision (0x23): retried, not refused.
        #expect(Self.of("link.feature-refused", try Self.airLink([[0x11, 0x16, 0x23]])).isEmpty)
    }

    /// nrf_sniffer_surplife_led_long.pcapng frame 10765: the peripheral answers LL_UNKNOWN_RSP to 0x28; the
    /// finding names the procedure (Core v5.4 Vol 6 Part B 2.4.2) and what the link goes without.
    @Test func unknownProcedureNamedByItsOpcode() throws {
        let f = Self.of("link.feature-refused", try Self.airLink([[0x07, 0x28]]))
        #expect(f.map(\.frames) == [[5]], "\(f.map(\.message))")
        let text = f.first?.message.description ?? ""
        #expect(text.contains("LL_CHANNEL_REPORTING_IND (LL opcode 0x28) procedure"), "\(text)")
        #expect(text.contains("without channel classification reports"), "\(text)")
        // An opcode no table names yet is given as a number.
        let g = Self.of("link.feature-refused", try Self.airLink([[0x07, 0x7E]]))
        #expect(g.first?.message.description.contains("The LL opcode 0x7e procedure") == true, "\(g.map(\.message))")
    }

    // MARK: L2CAP signalling

    @Test func parameterRequestRefused() throws {
        var b = Builder()
        b.leConnected(1000, handle: 0x40)                                                      // 1
        Self.signal(&b, 1000, .received, 0x12, 1, [6, 0, 6, 0, 0, 0, 0xF4, 0x01])            // 2: 7.5 ms asked
        Self.signal(&b, 1000, .sent, 0x13, 1, [0x01, 0x00])                                   // 3: rejected
        let f = Self.of("l2cap.parameter-request-refused", try Self.run(b))
        #expect(f.map(\.frames) == [[3, 2]], "\(f.map(\.message))")
        #expect(f.first?.severity == .info)
        var k = Builder()
        k.leConnected(1000, handle: 0x40)
        Self.signal(&k, 1000, .received, 0x12, 1, [24, 0, 40, 0, 0, 0, 0xF4, 0x01])
        Self.signal(&k, 1000, .sent, 0x13, 1, [0x00, 0x00])                                   // accepted
        #expect(Self.of("l2cap.parameter-request-refused", try Self.run(k)).isEmpty)
    }

    @Test func channelRefusedAndCommandReject() throws {
        var b = Builder()
        b.leConnected(1000, handle: 0x40)                                                               // 1
        // 2: LE Credit Based Connection Request, SPSM 0x0080, source CID 0x0040, MTU 512, MPS 247, 10 credits.
        Self.signal(&b, 1000, .sent, 0x14, 2, Self.le16(0x80) + Self.le16(0x40) + Self.le16(512) + Self.le16(247) + Self.le16(10))
        // 3: the response: SPSM not supported (0x0002).
        Self.signal(&b, 1000, .received, 0x15, 2, Self.le16(0) + Self.le16(0) + Self.le16(0) + Self.le16(0) + Self.le16(2))
        // 4: Credit Based Connection Request for EATT (SPSM 0x0027), one channel; 5: refused, SPSM not supported.
        Self.signal(&b, 1000, .sent, 0x17, 3, Self.le16(0x27) + Self.le16(512) + Self.le16(247) + Self.le16(10) + Self.le16(0x41))
        Self.signal(&b, 1000, .received, 0x18, 3, Self.le16(512) + Self.le16(247) + Self.le16(0) + Self.le16(2) + Self.le16(0))
        // 6: Command Reject, command not understood.
        Self.signal(&b, 1000, .received, 0x01, 4, [0x00, 0x00])
        let f = try Self.run(b)
        let refused = Self.of("l2cap.channel-refused", f)
        #expect(refused.map(\.frames) == [[3], [5]], "\(refused.map(\.message))")
        #expect(refused.map(\.severity) == [.warning, .info])
        #expect(refused.first?.message.description.contains("SPSM 0x0080") == true)
        #expect(Self.of("l2cap.command-reject", f).map(\.frames) == [[6]])
        // Counter-example: the channel opens.
        var k = Builder()
        k.leConnected(1000, handle: 0x40)
        Self.signal(&k, 1000, .sent, 0x14, 2, Self.le16(0x80) + Self.le16(0x40) + Self.le16(512) + Self.le16(247) + Self.le16(10))
        Self.signal(&k, 1000, .received, 0x15, 2, Self.le16(0x50) + Self.le16(512) + Self.le16(247) + Self.le16(2) + Self.le16(0))
        #expect(Self.of("l2cap.channel-refused", try Self.run(k)).isEmpty)
    }

    /// A channel opened with 2 credits for the host; the host spends both, the peer gives one back
    /// `after` later, and the host sends its next K-frame `then` after that.
    static func creditWait(after: Int64, then: Int64) throws -> [Finding] {
        var b = Builder()
        b.leConnected(1000, handle: 0x40)                                                               // 1
        Self.signal(&b, 1000, .sent, 0x14, 2, Self.le16(0x80) + Self.le16(0x40) + Self.le16(512) + Self.le16(247) + Self.le16(10))
        Self.signal(&b, 1000, .received, 0x15, 2, Self.le16(0x50) + Self.le16(512) + Self.le16(247) + Self.le16(2) + Self.le16(0))
        for _ in 0 ..< 2 { b.acl(10_000, .sent, handle: 0x40, cid: 0x50, Self.le16(20) + [UInt8](repeating: 1, count: 20)) }   // 4, 5
        Self.signal(&b, after, .received, 0x16, 5, Self.le16(0x50) + Self.le16(1))                      // 6: credits
        b.acl(then, .sent, handle: 0x40, cid: 0x50, Self.le16(20) + [UInt8](repeating: 1, count: 20))  // 7
        return Self.of("l2cap.credits-exhausted", try Self.run(b))
    }

    @Test func creditsExhausted() throws {
        let long = try Self.creditWait(after: 1_500_000, then: 10_000)
        #expect(long.map(\.frames) == [[6, 5, 7]], "\(long.map(\.message))")
        #expect(long.first?.severity == .warning)
        #expect(long.first?.message.description.contains("1.5 s") == true, "\(long.map(\.message))")
        // A short wait paces the transfer: information.
        #expect(try Self.creditWait(after: 200_000, then: 10_000).map(\.severity) == [.info])
        // The host sent nothing for 3 s after the credits came: it was not waiting for them.
        #expect(try Self.creditWait(after: 1_500_000, then: 3_000_000).isEmpty)
    }

    // MARK: BR/EDR: attempts refused, role switch, authentication

    @Test func classicAttemptRefusedRoleSwitchAndAuthentication() throws {
        var b = Builder()
        let peer = b.peer
        b.command(1000, 0x0405, peer + [0x18, 0xCC, 0x01, 0x00, 0x00, 0x00, 0x01])   // 1: Create Connection
        b.commandStatus(1000, 0x0405, 0x00)                                           // 2
        b.classicConnected(100_000, handle: 0x0B, status: 0x0B)                      // 3: ACL Connection Already Exists
        b.classicConnected(1000, handle: 0x0C)                                        // 4: the link (accepted from the peer)
        b.event(1000, 0x12, [0x21] + peer + [0x00])                                   // 5: Role Change, Role Change Not Allowed
        b.event(1000, 0x12, [0x23] + peer + [0x00])                                   // 6: Role Change, LMP Error Transaction Collision
        b.event(1000, 0x06, [0x05] + Self.le16(0x0C))                                 // 7: Authentication Complete, Authentication Failure
        let f = try Self.run(b)
        #expect(Self.of("pool.attempt-refused", f).map(\.frames) == [[3, 1]], "\(f.map(\.message))")
        let role = Self.of("link.role-switch-failed", f)
        #expect(role.map(\.frames) == [[5]] && role.first?.connection == 0x0C, "\(role.map(\.message))")
        #expect(role.first?.message.description.contains("stays central") == true, "\(role.map(\.message))")
        #expect(Self.of("link.procedure-collision", f).map(\.frames) == [[6]])
        let auth = Self.of("security.authentication-failed", f)
        #expect(auth.map(\.frames) == [[7]] && auth.first?.severity == .warning, "\(auth.map(\.message))")
        // Counter-examples: a role switch and an authentication that succeed, an attempt that connects.
        var k = Builder()
        k.command(1000, 0x0405, peer + [0x18, 0xCC, 0x01, 0x00, 0x00, 0x00, 0x01])
        k.commandStatus(1000, 0x0405, 0x00)
        k.classicConnected(100_000, handle: 0x0C)
        k.event(1000, 0x12, [0x00] + peer + [0x00])
        k.event(1000, 0x06, [0x00] + Self.le16(0x0C))
        let g = try Self.run(k)
        #expect(g.filter { ["pool.attempt-refused", "link.role-switch-failed", "security.authentication-failed"].contains($0.rule) }.isEmpty)
    }

    // MARK: security.just-works-mitm

    /// An LE pairing: the host's Pairing Request (KeyboardDisplay, Bonding|MITM|SC), the peer's Pairing
    /// Response (NoInputNoOutput, `peerAuth`), then encryption on with the new key.
    static func justWorks(peerAuth: UInt8) throws -> [Finding] {
        var b = Builder()
        b.leConnected(1000, handle: 0x40)                                                           // 1
        b.acl(100_000, .sent, handle: 0x40, cid: 6, [0x01, 0x04, 0x00, 0x0D, 0x10, 0x07, 0x07])   // 2
        b.acl(30_000, .received, handle: 0x40, cid: 6, [0x02, 0x03, 0x00, peerAuth, 0x10, 0x07, 0x07])  // 3
        b.encryptionChange(500_000, handle: 0x40)                                                   // 4
        return Self.of("security.just-works-mitm", try Self.run(b))
    }

    @Test func justWorksWhereThePeerAskedMITM() throws {
        let f = try Self.justWorks(peerAuth: 0x0D)
        #expect(f.map(\.frames) == [[3, 2, 4]], "\(f.map(\.message))")
        #expect(f.first?.severity == .info)
        // The phone's own MITM flag (a default) does not count: the peer asked for none (as
        // android_miband2_legacy_pairing_gatt.btsnoop frames 14138/14150).
        #expect(try Self.justWorks(peerAuth: 0x09).isEmpty)
    }

    // MARK: adv.periodic-sync-lost

    @Test func periodicSyncLost() throws {
        var b = Builder()
        b.event(1000, 0x3E, [0x10, 0x01, 0x00])    // 1: LE Periodic Advertising Sync Lost, sync handle 0x0001
        b.event(1000, 0x3E, [0x10, 0x02, 0x00])    // 2: another
        let f = Self.of("adv.periodic-sync-lost", try Self.run(b))
        #expect(f.map(\.frames) == [[1, 2]], "\(f.map(\.message))")
        #expect(f.first?.message.description.contains("lost 2 periodic") == true, "\(f.map(\.message))")
        // A sync that is never lost says nothing: LE Periodic Advertising Report only (subevent 0x0F).
        var k = Builder()
        k.event(1000, 0x3E, [0x0F, 0x01, 0x00, 0x7F, 0xC4, 0xFF, 0x00, 0x00])
        #expect(Self.of("adv.periodic-sync-lost", try Self.run(k)).isEmpty)
    }
}
