import TestSupport
import BLEAnalysis
import BLECapture
import BLEProtocol
import Foundation
import Testing

/// Issue 24, "Trust on every kind of capture": each false-alarm cause on a capture built byte by byte
/// in the shape that fooled a rule (a BlueZ long read with requests in between, a vendor switch
/// descriptor, an MTU exchange after GATT configuration only, …), with the counter-example where the
/// rule must still speak. The host is the central and the GATT client unless a test says otherwise.
@Suite struct TrustTests {
    typealias Builder = PrecisionRuleTests.Builder

    static func analyze(_ b: Builder) throws -> (Analyzer, [Finding]) { try PrecisionRuleTests.analyze(b) }

    static func describe(_ findings: [Finding]) -> String {
        findings.map { "\($0.severity) \($0.rule) \($0.frames): \($0.message)" }.joined(separator: "\n")
    }

    // MARK: item 2 — mtu.truncated-read

    /// BlueZ reads a HID Report Map in ATT_MTU−1 steps with another request between the Read and its
    /// Read Blobs: the value was read whole.
    static func longReadWithARequestBetween(blob: Bool) -> Builder {
        var b = Builder()
        b.leConnected(1000, handle: link)
        b.acl(10_000, .sent, handle: link, [0x0A] + le16(0x0020))                                       // Read Report Map
        b.acl(10_000, .received, handle: link, [0x0B] + [UInt8](repeating: 0x05, count: 22))           // 22 = ATT_MTU − 1
        b.acl(10_000, .sent, handle: link, [0x0A] + le16(0x0024))                                       // another read between
        b.acl(10_000, .received, handle: link, [0x0B, 0x01, 0x01])
        if blob {
            b.acl(10_000, .sent, handle: link, [0x0C] + le16(0x0020) + le16(22))                        // Read Blob, offset 22
            b.acl(10_000, .received, handle: link, [0x0D] + [UInt8](repeating: 0x06, count: 22))
            b.acl(10_000, .sent, handle: link, [0x0C] + le16(0x0020) + le16(44))
            b.acl(10_000, .received, handle: link, [0x0D] + [UInt8](repeating: 0x07, count: 9))
        }
        b.acl(10_000, .sent, handle: link, [0x0A] + le16(0x0028))
        b.acl(10_000, .received, handle: link, [0x0B, 0x02])
        b.disconnected(1_000_000, handle: link, reason: 0x13)
        return b
    }

    @Test func readBlobAfterAnotherRequestContinuesTheLongRead() throws {
        let (_, findings) = try Self.analyze(Self.longReadWithARequestBetween(blob: true))
        #expect(!findings.contains { $0.rule == "mtu.truncated-read" }, "\(Self.describe(findings))")
        // Counter-example: the same read never continued, while the client went on with other requests.
        let (_, cut) = try Self.analyze(Self.longReadWithARequestBetween(blob: false))
        let f = try #require(cut.first { $0.rule == "mtu.truncated-read" }, "\(Self.describe(cut))")
        #expect(f.severity == .warning)
        #expect(f.frames == [3, 2])
    }

    // MARK: item 4 — gatt.subscription-no-notify-property

    static func switchDescriptor(accepted: Bool) -> Builder {
        var b = Builder()
        b.leConnected(1000, handle: link)
        // 0xFFE1 @0x0011 is Read | Write (0x0A), with a CCCD at 0x0012: a vendor's switch.
        discover(&b, declaration: 0x0010, properties: 0x0A, uuid: 0xFFE1)
        b.acl(10_000, .sent, handle: link, [0x12] + le16(0x0012) + [0x01, 0x00])
        b.acl(10_000, .received, handle: link, accepted ? [0x13] : [0x01, 0x12] + le16(0x0012) + [0x03])
        return b
    }

    @Test func acceptedSubscriptionWithoutNotifyIsInformation() throws {
        let (_, findings) = try Self.analyze(Self.switchDescriptor(accepted: true))
        let f = try #require(findings.first { $0.rule == "gatt.subscription-no-notify-property" }, "\(Self.describe(findings))")
        #expect(f.severity == .info)
        #expect(f.frames == [6, 7])
        #expect(f.message.description.contains("accepted"))
        #expect(!findings.contains { $0.severity != .info }, "\(Self.describe(findings))")
        // Refused: the refusal is the finding (gatt.subscription-failed), not the properties.
        let (_, refused) = try Self.analyze(Self.switchDescriptor(accepted: false))
        #expect(!refused.contains { $0.rule == "gatt.subscription-no-notify-property" }, "\(Self.describe(refused))")
        #expect(refused.contains { $0.rule == "gatt.subscription-failed" && $0.severity == .warning })
    }

    // MARK: item 6 — mtu.late-exchange

    static func exchange(_ b: inout Builder, client: UInt16 = 247, server: UInt16 = 247) {
        b.acl(10_000, .sent, handle: link, [0x02] + le16(client))
        b.acl(10_000, .received, handle: link, [0x03] + le16(server))
    }

    @Test func gattConfigurationBeforeTheExchangeIsNotData() throws {
        // A CCCD write (2 bytes) and the phone's own Service Changed indication (4 bytes) before the exchange.
        var b = Builder()
        b.leConnected(1000, handle: link)
        discover(&b, declaration: 0x0010, properties: 0x1A, uuid: 0xFFE1)
        b.acl(10_000, .sent, handle: link, [0x1D] + le16(0x0003) + [0x01, 0x00, 0xFF, 0xFF])   // host's Service Changed
        b.acl(10_000, .received, handle: link, [0x1E])
        b.acl(10_000, .sent, handle: link, [0x12] + le16(0x0012) + [0x01, 0x00])
        b.acl(10_000, .received, handle: link, [0x13])
        Self.exchange(&b)
        let (_, findings) = try Self.analyze(b)
        #expect(!findings.contains { $0.rule == "mtu.late-exchange" }, "\(Self.describe(findings))")
    }

    @Test func onlyTheFirstExchangeAtTheDefaultMTUCanBeLate() throws {
        // An exchange, data, then a (forbidden) second exchange: the MTU was already large.
        var b = Builder()
        b.leConnected(1000, handle: link)
        Self.exchange(&b)
        b.acl(10_000, .sent, handle: link, [0x52] + le16(0x0020) + [UInt8](repeating: 1, count: 100))
        Self.exchange(&b, client: 512, server: 512)
        let (_, findings) = try Self.analyze(b)
        #expect(!findings.contains { $0.rule == "mtu.late-exchange" }, "\(Self.describe(findings))")
        // A mid-connection capture: the MTU before the exchange is not known to be 23.
        var m = Builder()
        m.acl(10_000, .sent, handle: link, [0x52] + le16(0x0020) + [UInt8](repeating: 1, count: 20))
        Self.exchange(&m)
        let (_, mid) = try Self.analyze(m)
        #expect(!mid.contains { $0.rule == "mtu.late-exchange" }, "\(Self.describe(mid))")
        // Counter-example: application data at ATT_MTU 23, then the first exchange.
        var k = Builder()
        k.leConnected(1000, handle: link)
        k.acl(10_000, .sent, handle: link, [0x52] + le16(0x0020) + [UInt8](repeating: 1, count: 20))
        Self.exchange(&k)
        let (_, late) = try Self.analyze(k)
        let f = try #require(late.first { $0.rule == "mtu.late-exchange" }, "\(Self.describe(late))")
        #expect(f.frames == [3, 2])
    }

    // MARK: item 1 — a capture that does not hold everything

    @Test func responseWhoseRequestPredatesAnACLOnlyExportIsNoViolation() throws {
        // A filtered export: ACL only, no HCI event; the first PDU is the answer to a request before the file.
        var b = Builder()
        b.acl(10_000, .received, handle: link, [0x0B, 0x01, 0x02])
        b.acl(10_000, .sent, handle: link, [0x0A] + le16(0x0003))
        b.acl(10_000, .received, handle: link, [0x0B, 0x41])
        let (a, findings) = try Self.analyze(b)
        #expect(a.statistics.holdsNoHCIEvents)
        #expect(!findings.contains { $0.rule == "att.protocol-violation" }, "\(Self.describe(findings))")
        // Counter-example: the same on a link whose set-up is in the capture, and a second orphan on the export.
        var k = Builder()
        k.leConnected(1000, handle: link)
        k.acl(10_000, .received, handle: link, [0x0B, 0x01, 0x02])
        let (k1, set) = try Self.analyze(k)
        #expect(!k1.statistics.holdsNoHCIEvents)
        #expect(set.contains { $0.rule == "att.protocol-violation" && $0.severity == .warning && $0.frames == [2] }, "\(Self.describe(set))")
        b.acl(10_000, .received, handle: link, [0x0B, 0x42])
        let (_, again) = try Self.analyze(b)
        #expect(again.contains { $0.rule == "att.protocol-violation" && $0.severity == .warning && $0.frames == [4] }, "\(Self.describe(again))")
    }

    @Test func responseAfterAnUndecodableFrameIsNotBlamedOnTheServer() throws {
        var b = Builder()
        b.leConnected(1000, handle: link)
        // A continuation fragment with no start (the request's first fragment never reached the log).
        b.continuation(10_000, .sent, handle: link, [0x03, 0x00])
        b.acl(10_000, .received, handle: link, [0x0B, 0x41])
        let (a, findings) = try Self.analyze(b)
        #expect(a.statistics.malformed == 1)
        let f = try #require(findings.first { $0.rule == "att.protocol-violation" }, "\(Self.describe(findings))")
        #expect(f.severity == .info)
        #expect(f.frames == [3, 2])
    }

    // MARK: missed problem 3 — a malformed request the server still answers

    @Test func requestTheDecoderCannotReadStillPairsItsResponse() throws {
        // A Read Request with one byte of handle (Core v5.4 Vol 3 Part F 3.4.4.3 needs two), answered.
        var b = Builder()
        b.leConnected(1000, handle: link)
        b.acl(10_000, .sent, handle: link, [0x0A, 0x03])
        b.acl(10_000, .received, handle: link, [0x0B, 0x41])
        let (_, findings) = try Self.analyze(b)
        #expect(!findings.contains { $0.rule == "att.protocol-violation" }, "\(Self.describe(findings))")
        let f = try #require(findings.first { $0.rule == "att.malformed-request" }, "\(Self.describe(findings))")
        #expect(f.severity == .warning)
        #expect(f.frames == [2, 3])
        #expect(f.actor == .peripheralFirmware)
    }

    /// A Write Request of 7 bytes whose L2CAP length says `claimed`.
    static func lyingWrite(claimed: Int = 12, answer: [UInt8]) -> Builder {
        var b = Builder()
        b.leConnected(1000, handle: link)
        b.acl(10_000, .sent, handle: link, [0x12] + le16(0x0010) + [0x01, 0x02, 0x03, 0x04], l2capLength: claimed)
        b.acl(10_000, .received, handle: link, answer)
        return b
    }

    @Test func lyingLengthAnsweredAsValidIsAWarning() throws {
        // Claims more than was sent (the PDU never completes), and less (the ACL packet carries more).
        for claimed in [12, 5] {
            let (_, findings) = try Self.analyze(Self.lyingWrite(claimed: claimed, answer: [0x13]))
            #expect(!findings.contains { $0.rule == "att.protocol-violation" }, "\(claimed): \(Self.describe(findings))")
            let f = try #require(findings.first { $0.rule == "att.malformed-request" }, "\(claimed): \(Self.describe(findings))")
            #expect(f.severity == .warning)
            #expect(f.frames == [2, 3])
        }
        // Counter-example: the server rejects it with Invalid PDU, as it must.
        let (_, rejected) = try Self.analyze(Self.lyingWrite(answer: [0x01, 0x12] + le16(0x0010) + [0x04]))
        #expect(!rejected.contains { $0.rule == "att.malformed-request" && $0.severity != .info }, "\(Self.describe(rejected))")
        // And a well-formed write answered: nothing.
        var ok = Builder()
        ok.leConnected(1000, handle: link)
        ok.acl(10_000, .sent, handle: link, [0x12] + le16(0x0010) + [0x01, 0x02, 0x03, 0x04])
        ok.acl(10_000, .received, handle: link, [0x13])
        let (_, clean) = try Self.analyze(ok)
        #expect(!clean.contains { $0.rule == "att.malformed-request" }, "\(Self.describe(clean))")
    }

    // MARK: missed problem 1 — a deadlocked ATT server; the client breaking the sequential rule

    /// SweynTooth's sequential deadlock (CVE-2019-19192): two requests in a row, both delivered (Number
    /// Of Completed Packets), the server answers neither while the peer still sends; the host gives up.
    static func deadlock(answerAfter: Int64?) -> Builder {
        var b = Builder()
        b.leConnected(1000, handle: link)
        b.acl(10_000, .sent, handle: link, [0x0A] + le16(0x0003))                 // 2: Read Request
        b.add(5_000, .received, .event, [0x13, 5, 1] + le16(link) + [1, 0])       // 3: delivered
        b.acl(1_000, .sent, handle: link, [0x0A] + le16(0x0005))                  // 4: a second request (client breaks the rule)
        b.add(5_000, .received, .event, [0x13, 5, 1] + le16(link) + [1, 0])       // 5: delivered
        if let answerAfter {
            b.acl(answerAfter, .received, handle: link, [0x0B, 0x41])
            b.acl(1_000, .received, handle: link, [0x0B, 0x42])
        }
        b.acl(3_000_000, .received, handle: link, [0x1B] + le16(0x0012) + [0x01])   // the peer still sends
        b.command(9_000_000, 0x0406, le16(link) + [0x13])                          // the host gives up
        b.commandStatus(1000, 0x0406, 0x00)
        b.disconnected(20_000, handle: link, reason: 0x16)
        return b
    }

    @Test func deadlockedServerAndTheClientThatBrokeTheRule() throws {
        let (_, findings) = try Self.analyze(Self.deadlock(answerAfter: nil))
        let stalled = try #require(findings.first { $0.rule == "att.server-stalled" }, "\(Self.describe(findings))")
        #expect(stalled.severity == .warning)
        #expect(stalled.frames == [2, 6])
        #expect(stalled.message.description.contains("1 later request also unanswered"))
        let rule = try #require(findings.first { $0.rule == "att.protocol-violation" }, "\(Self.describe(findings))")
        #expect(rule.frames == [4, 2])
        #expect(rule.actor == .app)
        // Counter-example: a slow server that answers both.
        let (_, slow) = try Self.analyze(Self.deadlock(answerAfter: 2_000_000))
        #expect(!slow.contains { $0.rule == "att.server-stalled" }, "\(Self.describe(slow))")
    }

    // MARK: item 5 — iOS reconnects with cached handles; bonded peers

    /// No discovery on the connection: the client writes 01 00 to value handle + 1, then values come.
    static func cachedSubscription(cccd: UInt16) -> Builder {
        var b = Builder()
        b.leConnected(1000, handle: link)
        b.acl(10_000, .sent, handle: link, [0x12] + le16(cccd) + [0x01, 0x00])
        b.acl(10_000, .received, handle: link, [0x13])
        b.acl(10_000, .received, handle: link, [0x1B] + le16(0x0012) + [0x01, 0x02])
        return b
    }

    @Test func writeToValueHandlePlusOneIsTheSubscription() throws {
        let (a, findings) = try Self.analyze(Self.cachedSubscription(cccd: 0x0013))
        #expect(!findings.contains { $0.rule == "gatt.unsubscribed-notification" }, "\(Self.describe(findings))")
        let sub = try #require(a.session.connections.first?.subscriptions[0x0013])
        #expect(sub.outcome == .accepted)
        #expect(sub.frame == 2)
        // Counter-example: the write went elsewhere; the notification is unasked on a new, unencrypted link.
        let (_, other) = try Self.analyze(Self.cachedSubscription(cccd: 0x0020))
        #expect(other.contains { $0.rule == "gatt.unsubscribed-notification" && $0.severity == .warning }, "\(Self.describe(other))")
    }

    @Test func aPeerEncryptedWithAStoredKeyIsBonded() throws {
        // The phone's own server notifies a peer that encrypted the link with a stored key (no pairing).
        var b = Builder()
        b.leConnected(1000, handle: link)
        b.encryptionChange(10_000, handle: link)
        b.acl(10_000, .sent, handle: link, [0x1B] + le16(0x0030) + [0x01])
        let (_, findings) = try Self.analyze(b)
        let f = try #require(findings.first { $0.rule == "gatt.unsubscribed-notification" }, "\(Self.describe(findings))")
        #expect(f.severity == .info)
        #expect(!f.message.description.contains("unasked"), "\(f.message)")
        #expect(f.message.description.contains("bonded"))
        // Its indication the bonded peer never confirms while it goes on: it may have subscribed on an
        // earlier connection (not "never subscribed"), which the capture cannot show: information.
        var k = Builder()
        k.leConnected(1000, handle: link)
        k.encryptionChange(10_000, handle: link)
        k.acl(10_000, .sent, handle: link, [0x1D] + le16(0x0030) + [0x01])
        k.acl(10_000, .received, handle: link, [0x0A] + le16(0x0003))
        k.acl(10_000, .sent, handle: link, [0x0B, 0x01])
        let (_, ind) = try Self.analyze(k)
        let u = try #require(ind.first { $0.rule == "att.indication-unconfirmed" }, "\(Self.describe(ind))")
        #expect(u.severity == .info)
        #expect(u.message.description.contains("may have subscribed on an earlier one"), "\(u.message)")
    }

    @Test func aStoredKeyEncryptionTheLossCutStillMeansBonded() throws {
        // The iOS capture of the real corpus (bikego 45178-45372): as central the host starts encryption
        // with its LTK (no pairing), its Service Changed indication goes out, then the link is lost and
        // the Encryption Change carries the loss reason. The host holds a bond: not "unasked".
        var b = Builder()
        b.leConnected(1000, handle: link)
        b.command(10_000, 0x2019, le16(link) + [UInt8](repeating: 0x11, count: 8) + le16(0x0001) + [UInt8](repeating: 0x22, count: 16))
        b.commandStatus(1000, 0x2019, 0x00)
        b.acl(10_000, .sent, handle: link, [0x1D] + le16(0x0008) + [0x0A, 0x00, 0xFF, 0xFF])
        b.encryptionChange(10_000, handle: link, status: 0x08, enabled: false)
        b.disconnected(1000, handle: link, reason: 0x08)
        let (_, findings) = try Self.analyze(b)
        let f = try #require(findings.first { $0.rule == "gatt.unsubscribed-notification" }, "\(Self.describe(findings))")
        #expect(f.severity == .info)
        #expect(f.message.description.contains("encryption with a stored key started at frame 2: bonded"), "\(f.message)")
        // Without the encryption start the host's server did send it unasked.
        var u = Builder()
        u.leConnected(1000, handle: link)
        u.acl(10_000, .sent, handle: link, [0x1D] + le16(0x0008) + [0x0A, 0x00, 0xFF, 0xFF])
        u.disconnected(1000, handle: link, reason: 0x13)
        let (_, other) = try Self.analyze(u)
        let g = try #require(other.first { $0.rule == "gatt.unsubscribed-notification" }, "\(Self.describe(other))")
        #expect(g.message.description.contains("unasked"), "\(g.message)")
    }

    @Test func discoveryLineCountsThisConnectionsDiscovery() throws {
        // The same table discovered on two connections of one handle: each tells its own discovery.
        var b = Builder()
        for _ in 0 ..< 2 {
            b.leConnected(1_000_000, handle: link)
            b.acl(10_000, .sent, handle: link, [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28])
            b.acl(10_000, .received, handle: link, [0x11, 6, 0x01, 0x00, 0x05, 0x00, 0x00, 0x18])
            discover(&b, declaration: 0x0002, properties: 0x12, uuid: 0x2A00)
            b.acl(10_000, .sent, handle: link, [0x0A] + le16(0x0003))
            b.acl(10_000, .received, handle: link, [0x0B, 0x41])
            b.disconnected(10_000, handle: link, reason: 0x13)
        }
        let (a, _) = try Self.analyze(b)
        #expect(a.session.connections.count == 2)
        for c in a.session.connections {
            let line = try #require(c.timeline.first { $0.kind == .discovery })
            #expect(line.fact == .discovery(services: 1, characteristics: 1, descriptors: 1), "connection \(c.index)")
            // Stamped where discovery ran: its last response (Find Information Response).
            #expect(line.frame == (c.index == 1 ? 7 : 17), "connection \(c.index)")
        }
    }

    // MARK: item 7 — connection boundaries without HCI events

    @Test func aHandleReusedBySessionsOfAnACLOnlyExportIsSplit() throws {
        // Three sessions on handle 0x0040 of an ACL-only export, each with its MTU exchange and discovery.
        var b = Builder()
        for i in 0 ..< 3 {
            b.acl(i == 0 ? 1000 : 5_000_000, .sent, handle: link, [0x02] + le16(247))
            b.acl(10_000, .received, handle: link, [0x03] + le16(247))
            b.acl(10_000, .sent, handle: link, [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28])
            b.acl(10_000, .received, handle: link, [0x11, 6, 0x01, 0x00, 0x05, 0x00, 0x00, 0x18])
            b.acl(10_000, .sent, handle: link, [0x0A] + le16(0x0003))
            b.acl(10_000, .received, handle: link, [0x0B, 0x41])
        }
        let (a, findings) = try Self.analyze(b)
        #expect(a.session.connections.count == 3)
        #expect(a.session.connections.map { $0.att.mtuRequests } == [1, 1, 1])
        #expect(a.session.connections.filter { $0.att.mtuKnown }.count == 3)
        #expect(!findings.contains { $0.severity != .info }, "\(Self.describe(findings))")
        // A rediscovery after a long silence (an ACL-only export with a 4 h gap) starts a session too;
        // the same rediscovery seconds later (an app refreshing its cache) does not.
        for (gap, sessions) in [(Int64(3_600_000_000), 2), (2_000_000, 1)] {
            var g = Builder()
            for i in 0 ..< 2 {
                g.acl(i == 0 ? 1000 : gap, .sent, handle: link, [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28])
                g.acl(10_000, .received, handle: link, [0x11, 6, 0x01, 0x00, 0x05, 0x00, 0x00, 0x18])
                g.acl(10_000, .sent, handle: link, [0x52] + le16(0x0003) + [0x01])
            }
            let (ga, _) = try Self.analyze(g)
            #expect(ga.session.connections.count == sessions, "gap \(gap)")
        }
    }

    @Test func bothSidesExchangingMTUSplitOnTheSecondRequestOfOneSide() throws {
        // Both sides are clients (the Daly balancer of the real corpus: the peer asks for the MTU, then
        // the host does): each exchanges once per connection, so the peer's second request starts the
        // next session, whatever the host sent between.
        var b = Builder()
        for i in 0 ..< 3 {
            b.acl(i == 0 ? 1000 : 5_000_000, .received, handle: link, [0x02] + le16(512))
            b.acl(10_000, .sent, handle: link, [0x03] + le16(512))
            b.acl(10_000, .sent, handle: link, [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28])
            b.acl(10_000, .received, handle: link, [0x11, 6, 0x01, 0x00, 0x05, 0x00, 0x00, 0x18])
            if i != 1 {
                b.acl(10_000, .sent, handle: link, [0x02] + le16(512))
                b.acl(10_000, .received, handle: link, [0x03] + le16(512))
            }
        }
        let (a, _) = try Self.analyze(b)
        #expect(a.session.connections.map(\.att.mtuRequests) == [2, 1, 2])
        #expect(a.session.connections.map { $0.timeline.first?.frame } == [1, 7, 11])
    }

    // MARK: small things — names

    @Test func aPaddedNameLearntAfterConnectingNamesThePeerEverywhere() throws {
        // The GAP Device Name read after connecting, padded with NULs and 0xFF by the firmware.
        var b = Builder()
        b.leConnected(1000, handle: link)
        discover(&b, declaration: 0x0002, properties: 0x02, uuid: 0x2A00)
        b.acl(10_000, .sent, handle: link, [0x0A] + le16(0x0003))
        b.acl(10_000, .received, handle: link, [0x0B] + Array("Lamp".utf8) + [0x00, 0x00, 0xFF])
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("names-\(UUID().uuidString).btsnoop")
        try Data(b.bytes).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        // Without detectors (timeline, gatt, info) as with them (the report).
        for detect in [false, true] {
            let analyzer = Analyzer(detect: detect)
            _ = try CaptureFile(path: url.path).read { analyzer.consume($0) }
            _ = analyzer.finish()
            #expect(analyzer.session.connections.first?.peerName == "Lamp", "detect: \(detect)")
        }
    }

    @Test func keySizeZeroIsNotReported() throws {
        // Encryption Change v2 (0x59) with key size 0, as Apple's controllers log it; then a real size.
        // (ReportTests.StoryTextTests words it: "key size not reported".)
        for size: UInt8 in [0, 16] {
            var b = Builder()
            b.leConnected(1000, handle: link)
            b.add(10_000, .received, .event, [0x59, 5, 0x00] + le16(link) + [0x01, size])
            let (a, _) = try Self.analyze(b)
            let line = try #require(a.session.connections.first?.timeline.first { $0.kind == .security })
            #expect(line.fact == .encryption(on: true, keySize: size))
        }
    }

    @Test func brEDRRoleFromTheHostsCreateConnection() throws {
        // Create Connection (0x0405) to C0:FF:EE:00:00:01, its Command Status, Connection Complete (no role field).
        var b = Builder()
        let peer: [UInt8] = PrecisionRuleTests.peer
        b.command(1000, 0x0405, peer + [0x18, 0xCC, 0x01, 0x00, 0x00, 0x00, 0x01])
        b.commandStatus(1000, 0x0405, 0x00)
        b.add(100_000, .received, .event, [0x03, 11, 0x00, 0x0B, 0x00] + peer + [0x01, 0x00])
        let (a, _) = try Self.analyze(b)
        #expect(a.session.connections.first?.role == .central)
        // Counter-example: a connection the peer made (no create from the host): the role stays unknown.
        var k = Builder()
        k.add(100_000, .received, .event, [0x03, 11, 0x00, 0x0B, 0x00] + peer + [0x01, 0x00])
        let (ka, _) = try Self.analyze(k)
        #expect(ka.session.connections.first?.role == .unknown)
    }

    // MARK: item 8 — an advertiser that does not exist

    @Test func aCorruptAdvertisingReportMakesNoAdvertiser() throws {
        // Two legacy reports: a good one, and one whose Address_Type (0x41) is reserved: bytes of
        // something else read as a report (its "address" is not a device).
        var b = Builder()
        let good: [UInt8] = [0x02, 0x01, 0x00, 0x00] + PrecisionRuleTests.peer + [0x03, 0x02, 0x01, 0x06, 0xC4]
        b.add(1000, .received, .event, [0x3E, UInt8(good.count)] + good)
        let corrupt: [UInt8] = [0x02, 0x01, 0x00, 0x41, 0x4C, 0x45, 0x44, 0x42, 0x4C, 0x45, 0x03, 0x02, 0x01, 0x06, 0xC4]
        b.add(1000, .received, .event, [0x3E, UInt8(corrupt.count)] + corrupt)
        let (a, findings) = try Self.analyze(b)
        #expect(a.session.advertisers.all.count == 1)
        #expect(a.session.advertisers.corruptReports == 1)
        #expect(!findings.contains { $0.rule.hasPrefix("adv.") }, "\(Self.describe(findings))")
    }
}

/// The connection handle of every built capture here.
private let link: UInt16 = 0x0040

private func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }

/// A Read By Type (characteristics) exchange discovering `declaration` with `properties`, then
/// Find Information naming `declaration + 2` a CCCD.
private func discover(_ b: inout PrecisionRuleTests.Builder, declaration: UInt16, properties: UInt8, uuid: UInt16) {
    let value = declaration + 1, cccd = declaration + 2
    b.acl(10_000, .sent, handle: link, [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28])
    b.acl(10_000, .received, handle: link, [0x09, 7, UInt8(declaration & 0xFF), UInt8(declaration >> 8), properties,
                                               UInt8(value & 0xFF), UInt8(value >> 8), UInt8(uuid & 0xFF), UInt8(uuid >> 8)])
    b.acl(10_000, .sent, handle: link, [0x04, UInt8(cccd & 0xFF), UInt8(cccd >> 8), UInt8(cccd & 0xFF), UInt8(cccd >> 8)])
    b.acl(10_000, .received, handle: link, [0x05, 0x01, UInt8(cccd & 0xFF), UInt8(cccd >> 8), 0x02, 0x29])
}


