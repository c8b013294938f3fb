import TestSupport
import BLEAnalysis
import BLECapture
import BLEProtocol
import Foundation
import Testing

/// `Connection.transfer` and the `perf.*` rules on captures built byte by byte (`PrecisionRuleTests.Builder`):
/// one factor each, with the ceiling computed here from the formula of docs/RULES.md "Transfer and its
/// limits", and a counter-example for each rule.
@Suite struct PerfRuleTests {
    typealias B = PrecisionRuleTests.Builder
    static let handle: UInt16 = 0x0040

    /// LE Connection Update Complete (Core v5.4 Vol 4 Part E 7.7.65.3): `interval` × 1.25 ms (default 30 ms), `latency`.
    static func update(_ b: inout B, interval: UInt8 = 24, latency: UInt8) {
        b.add(1000, .received, .event, [0x3E, 10, 0x03, 0x00, UInt8(handle & 0xFF), UInt8(handle >> 8), interval, 0x00, latency, 0x00, 0xC8, 0x00])
    }

    static func perf(_ findings: [Finding]) -> [Finding] { findings.filter { $0.rule.hasPrefix("perf.") } }

    /// The LED-strip pattern of issue 25: 469 Write Requests of 11 bytes, each answered 93 ms later (three
    /// 30 ms intervals, the peer's latency 16), the next sent 17 ms after the response.
    @Test func writesPacedByTheirResponsesAreWriteWithResponse() throws {
        var b = B()
        b.leConnected(1000, handle: Self.handle)
        Self.update(&b, latency: 16)
        for _ in 0 ..< 469 {
            b.acl(17_000, .sent, handle: Self.handle, [0x12, 0x15, 0x00] + [UInt8](repeating: 0x7E, count: 11))
            b.acl(93_000, .received, handle: Self.handle, [0x13])
        }
        let (a, findings) = try PrecisionRuleTests.analyze(b)
        let d = try #require(a.session.connections.first).transfer.sent
        #expect(d.pdus == 469 && d.bytes == 469 * 11 && d.writeRequests == 469)
        // 468 periods of 110 ms; one round trip per 30 ms interval: 11 bytes per 30 ms.
        #expect(abs((d.seconds ?? 0) - 468 * 0.110) < 1e-6)
        #expect(abs((d.ceilingBytesPerSecond ?? 0) - 11 / 0.030) < 0.01)
        #expect(d.limitedBy == [.writeWithResponse, .peripheralLatency, .connectionInterval], "\(d.limitedBy)")
        let p = Self.perf(findings)
        #expect(p.map(\.rule) == ["perf.write-with-response"], "\(p.map(\.message.description))")
        #expect(p.first?.severity == .info)
        #expect(p.first?.message.description.contains("469 Write Requests") == true)
        #expect(p.first?.message.description.contains("canSendWriteWithoutResponse") == true)
    }

    /// Counter-examples: the same data as Write Commands, and Write Requests the app sends every 2 s
    /// (answered in one interval: the application, not the responses, spaces them).
    @Test func writeCommandsAndSparseWriteRequestsAreNot() throws {
        var b = B()
        b.leConnected(1000, handle: Self.handle)
        Self.update(&b, latency: 16)
        for _ in 0 ..< 469 { b.acl(110_000, .sent, handle: Self.handle, [0x52, 0x15, 0x00] + [UInt8](repeating: 0x7E, count: 11)) }
        let (a, findings) = try PrecisionRuleTests.analyze(b)
        let d = try #require(a.session.connections.first).transfer.sent
        #expect(d.pdus == 469 && d.writeCommands == 469 && d.writeRequests == 0)
        #expect(!d.limitedBy.contains(.writeWithResponse), "\(d.limitedBy)")
        #expect(Self.perf(findings).isEmpty, "\(Self.perf(findings).map(\.message.description))")

        var s = B()
        s.leConnected(1000, handle: Self.handle)
        for _ in 0 ..< 100 {
            s.acl(2_000_000, .sent, handle: Self.handle, [0x12, 0x15, 0x00, 0x01])
            s.acl(30_000, .received, handle: Self.handle, [0x13])
        }
        let (a2, f2) = try PrecisionRuleTests.analyze(s)
        let d2 = try #require(a2.session.connections.first).transfer.sent
        #expect(d2.limitedBy.first == .application, "\(d2.limitedBy)")
        #expect(Self.perf(f2).isEmpty, "\(Self.perf(f2).map(\.message.description))")
    }

    /// 20-byte Write Commands at ATT_MTU 23 (no exchange), 5 handed over together per 30 ms connection
    /// event for 1.5 s: `att-mtu`, `perf.small-mtu`.
    /// Each L2CAP PDU of 27 octets is one LL data PDU on LE 1M: (10 + 27) × 8 µs, T_IFS, an empty PDU
    /// (10 × 8 µs), T_IFS = 676 µs.
    @Test func smallMTU() throws {
        var b = B()
        b.leConnected(1000, handle: Self.handle)
        for i in 0 ..< 250 { b.acl(i % 5 == 0 ? 30_000 : 100, .sent, handle: Self.handle, [0x52, 0x15, 0x00] + [UInt8](repeating: 0x33, count: 20)) }
        let (a, findings) = try PrecisionRuleTests.analyze(b)
        let d = try #require(a.session.connections.first).transfer.sent
        #expect(d.fullPDUs == 250 && d.fragmentedPDUs == 0)
        #expect(abs((d.ceilingBytesPerSecond ?? 0) - 20 / 676e-6) < 0.1)
        #expect(d.limitedBy == [.connectionInterval, .phy, .attMTU], "\(d.limitedBy)")
        #expect(Self.perf(findings).map(\.rule) == ["perf.small-mtu"], "\(Self.perf(findings).map(\.message.description))")
        // Counter-example: the same values after an MTU exchange to 247 do not fill it.
        var c = B()
        c.leConnected(1000, handle: Self.handle)
        c.acl(1000, .sent, handle: Self.handle, [0x02, 0xF7, 0x00])
        c.acl(30_000, .received, handle: Self.handle, [0x03, 0xF7, 0x00])
        for _ in 0 ..< 200 { c.acl(5_000, .sent, handle: Self.handle, [0x52, 0x15, 0x00] + [UInt8](repeating: 0x33, count: 20)) }
        let (a2, f2) = try PrecisionRuleTests.analyze(c)
        #expect(try #require(a2.session.connections.first).transfer.sent.fullPDUs == 0)
        #expect(Self.perf(f2).isEmpty, "\(Self.perf(f2).map(\.message.description))")
    }

    /// 244-byte notifications at ATT_MTU 247, two per connection event, with the data length left at 27: each L2CAP PDU of 251
    /// octets needs 10 LL data PDUs (9 of 27, one of 8): `data-length`, `perf.data-length`. After LE Data
    /// Length Change to 251 octets / 2120 µs it is one LL data PDU and the rule is quiet.
    @Test func dataLength() throws {
        func capture(dle: Bool) -> B {
            var b = B()
            b.leConnected(1000, handle: Self.handle)
            b.acl(1000, .sent, handle: Self.handle, [0x02, 0xF7, 0x00])
            b.acl(30_000, .received, handle: Self.handle, [0x03, 0xF7, 0x00])
            if dle {   // LE Data Length Change (Vol 4 Part E 7.7.65.7): TX/RX 251 octets, 2120 µs
                b.add(1000, .received, .event, [0x3E, 11, 0x07, UInt8(Self.handle & 0xFF), UInt8(Self.handle >> 8), 0xFB, 0x00, 0x48, 0x08, 0xFB, 0x00, 0x48, 0x08])
            }
            // Two per 30 ms connection event, as a controller delivers what one event carried.
            for i in 0 ..< 100 { b.acl(i % 2 == 0 ? 30_000 : 200, .received, handle: Self.handle, [0x1B, 0x16, 0x00] + [UInt8](repeating: 0x44, count: 244)) }
            return b
        }
        let (a, findings) = try PrecisionRuleTests.analyze(capture(dle: false))
        let d = try #require(a.session.connections.first).transfer.received
        #expect(d.pdus == 100 && d.bytes == 24_400 && d.fragmentedPDUs == 100)
        let last: Double = (10 + 8) * 8 + 150 + 80 + 150
        let perPDU: Double = 9 * 676 + last
        #expect(abs((d.ceilingBytesPerSecond ?? 0) - 244 / (perPDU / 1e6)) < 0.1)
        #expect(d.limitedBy == [.connectionInterval, .dataLength, .phy], "\(d.limitedBy)")
        #expect(Self.perf(findings).map(\.rule) == ["perf.data-length"], "\(Self.perf(findings).map(\.message.description))")

        let (a2, f2) = try PrecisionRuleTests.analyze(capture(dle: true))
        let d2 = try #require(a2.session.connections.first).transfer.received
        #expect(d2.fragmentedPDUs == 0)
        let one: Double = (10 + 251) * 8 + 150 + 80 + 150
        #expect(abs((d2.ceilingBytesPerSecond ?? 0) - 244 / (one / 1e6)) < 0.1)
        #expect(Self.perf(f2).isEmpty, "\(Self.perf(f2).map(\.message.description))")
    }

    /// Busy below half the ceiling: two 244-byte Write Commands per 30 ms connection event (one LL packet
    /// each at 251 octets) is `connection-interval` first; a sensor's 20-byte notification every 50 ms on
    /// a 7.5 ms interval (fewer PDUs than events, no long pause) is `application`.
    @Test func perEventBurstsAndAnApplicationsPace() throws {
        var b = B()
        b.leConnected(1000, handle: Self.handle)
        b.acl(1000, .sent, handle: Self.handle, [0x02, 0xF7, 0x00])
        b.acl(30_000, .received, handle: Self.handle, [0x03, 0xF7, 0x00])
        b.add(1000, .received, .event, [0x3E, 11, 0x07, UInt8(Self.handle & 0xFF), UInt8(Self.handle >> 8), 0xFB, 0x00, 0x48, 0x08, 0xFB, 0x00, 0x48, 0x08])
        for _ in 0 ..< 100 {
            b.acl(30_000, .sent, handle: Self.handle, [0x52, 0x15, 0x00] + [UInt8](repeating: 0x55, count: 244))
            b.acl(100, .sent, handle: Self.handle, [0x52, 0x15, 0x00] + [UInt8](repeating: 0x55, count: 244))
        }
        let (a, _) = try PrecisionRuleTests.analyze(b)
        let d = try #require(a.session.connections.first).transfer.sent
        #expect(d.fragmentedPDUs == 0 && d.idleGaps == 0)
        #expect(d.limitedBy == [.connectionInterval, .phy], "\(d.limitedBy)")

        var s = B()
        s.leConnected(1000, handle: Self.handle)
        Self.update(&s, interval: 6, latency: 0)
        for _ in 0 ..< 100 { s.acl(50_000, .received, handle: Self.handle, [0x1B, 0x16, 0x00] + [UInt8](repeating: 0x66, count: 20)) }
        let (a2, f2) = try PrecisionRuleTests.analyze(s)
        let d2 = try #require(a2.session.connections.first).transfer.received
        #expect(d2.idleGaps == 0)
        #expect(d2.limitedBy.first == .application, "\(d2.limitedBy)")
        #expect(Self.perf(f2).isEmpty, "\(Self.perf(f2).map(\.message.description))")
    }
}
