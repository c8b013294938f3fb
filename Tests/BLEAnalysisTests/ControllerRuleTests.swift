import BLEAnalysis
import BLEBytes
import BLECapture
import BLEProtocol
import Foundation
import TestSupport
import Testing

/// The controller, link-layer and radio rules (`hci.*`, `link.stall`, `link.procedure-collision`,
/// `link.instant-passed`, `radio.*`) on captures built here, each with a counter-example where the rule
/// must stay quiet.
@Suite struct ControllerRuleTests {
    typealias Builder = CaptureBuilder
    static func run(_ b: Builder) throws -> [Finding] { try PrecisionRuleTests.analyze(b).1 }
    static func of(_ rule: String, _ f: [Finding]) -> [Finding] { f.filter { $0.rule == rule } }

    /// A Write Command of 20 bytes on `handle`.
    static func write(_ b: inout Builder, _ dt: Int64, handle: UInt16 = 0x40) {
        b.acl(dt, .sent, handle: handle, [0x52, 0x10, 0x00] + [UInt8](repeating: 7, count: 20))
    }

    @Test func commandAnsweredLateOrNeverIsATimeout() throws {
        var b = Builder()
        b.command(1000, 0x200B, [0x01, 0x10, 0x00, 0x10, 0x00, 0x00, 0x00])   // LE Set Scan Parameters
        b.commandComplete(2_500_000, 0x200B, [0x00])                            // 2.5 s later (frame 2)
        b.command(1000, 0x0C14, [])                                             // Read Local Name: never answered
        b.command(3_000_000, 0x1001, [])                                        // 3 s later, answered at once
        b.commandComplete(1000, 0x1001, [0x00, 0x09, 0x00, 0x00, 0x09, 0x1D, 0x00, 0xBE, 0x02])
        let f = Self.of("hci.command-timeout", try Self.run(b))
        #expect(f.map(\.frames) == [[1, 2], [3]], "\(f.map(\.message))")
        #expect(f.allSatisfy { $0.severity == .warning })
        // Counter-examples: answered in 100 ms; a command still waiting when the capture ends.
        var k = Builder()
        k.command(1000, 0x200B, [0x01, 0x10, 0x00, 0x10, 0x00, 0x00, 0x00])
        k.commandComplete(100_000, 0x200B, [0x00])
        k.command(1000, 0x0C14, [])
        k.event(1_000_000, 0x13, [0])
        #expect(Self.of("hci.command-timeout", try Self.run(k)).isEmpty)
    }

    @Test func refusedEventMaskIsAWarningFromTheFirst() throws {
        var b = Builder()
        b.command(1000, 0x2001, [0x3F, 0, 0, 0, 0, 0, 0, 0])
        b.commandComplete(1000, 0x2001, [0x20])   // as android_leafspy_obd_spp_page_timeout.btsnoop frame 48
        b.command(1000, 0x0C7A, [0x01])
        b.commandComplete(1000, 0x0C7A, [0x01])   // Unknown HCI Command: the controller does not have it
        let f = Self.of("hci.config-refused", try Self.run(b))
        #expect(f.map(\.severity) == [.warning, .info], "\(f.map(\.message))")
        #expect(f.first?.frames == [2, 1])
        var k = Builder()
        k.command(1000, 0x2001, [0x3F, 0, 0, 0, 0, 0, 0, 0])
        k.commandComplete(1000, 0x2001, [0x00])
        #expect(Self.of("hci.config-refused", try Self.run(k)).isEmpty)
    }

    @Test func hardwareErrorOverflowAndReset() throws {
        var b = Builder()
        b.leConnected(1000, handle: 0x40)
        b.event(1000, 0x10, [0x42])          // Hardware Error
        b.event(1000, 0x1A, [0x01])          // Data Buffer Overflow (ACL)
        b.command(1000, 0x0C03, [])          // HCI Reset with the link open
        b.commandComplete(1000, 0x0C03, [0x00])
        let f = try Self.run(b)
        #expect(Self.of("hci.hardware-error", f).map(\.frames) == [[2]])
        #expect(Self.of("hci.buffer-overflow", f).map(\.frames) == [[3]])
        #expect(Self.of("hci.controller-restarted", f).map(\.frames) == [[4, 1]])
        // A reset with no link open restarts nothing anyone sees.
        var k = Builder()
        k.command(1000, 0x0C03, [])
        k.commandComplete(1000, 0x0C03, [0x00])
        #expect(Self.of("hci.controller-restarted", try Self.run(k)).isEmpty)
    }

    /// The issue's second case: writes on an 18.75 ms link with a 6 s supervision timeout, completed 2.7 s
    /// later (45 % of the timeout) while the host kept writing.
    @Test func stallOfABusyLink() throws {
        var b = Builder()
        b.leConnected(1000, handle: 0x40, interval: 15, timeout: 600)
        for _ in 0 ..< 5 { Self.write(&b, 20_000); b.completed(19_000, handle: 0x40) }
        Self.write(&b, 20_000)                          // frame 12: the stall starts
        Self.write(&b, 20_000)                          // frame 13: the host keeps writing
        b.completed(2_700_000, handle: 0x40, count: 2)  // frame 14
        let f = Self.of("link.stall", try Self.run(b))
        #expect(f.count == 1 && f.first?.severity == .warning, "\(f.map(\.message))")
        #expect(f.first?.frames.prefix(2) == [14, 12])
        // Counter-example: one write on an idle link completed late (a controller reporting at its own pace,
        // as a real PacketLogger log does) and nothing sent after it for long.
        var k = Builder()
        k.leConnected(1000, handle: 0x40, interval: 15, timeout: 600)
        Self.write(&k, 20_000); k.completed(19_000, handle: 0x40)
        Self.write(&k, 20_000); k.completed(2_700_000, handle: 0x40)
        Self.write(&k, 10_000_000); k.completed(19_000, handle: 0x40)
        #expect(Self.of("link.stall", try Self.run(k)).isEmpty)
    }

    /// The host restarts scanning during a busy link; each enable takes a second and the writes wait.
    @Test func scanRestartsStopABusyLink() throws {
        func capture(slow: Bool) -> Builder {
            var b = Builder()
            b.leConnected(1000, handle: 0x40)
            for _ in 0 ..< 2 {
                for _ in 0 ..< 4 { Self.write(&b, 30_000); b.completed(29_000, handle: 0x40) }
                Self.write(&b, 30_000)                                         // waits through the enable
                b.command(1000, 0x200C, [0x01, 0x00])
                b.commandComplete(slow ? 1_000_000 : 5_000, 0x200C, [0x00])
                b.completed(1000, handle: 0x40)
                b.command(12_000_000, 0x200C, [0x00, 0x00])
                b.commandComplete(5000, 0x200C, [0x00])
            }
            return b
        }
        let f = Self.of("radio.scan-contention", try Self.run(capture(slow: true)))
        #expect(f.count == 1 && f.first?.severity == .warning, "\(f.map(\.message))")
        #expect(f.first?.cause?.kind == .radioContention)
        #expect(Self.of("radio.scan-contention", try Self.run(capture(slow: false))).isEmpty)
    }

    /// A BR/EDR inquiry (2.56 s asked) while the peer streams on a Classic link: the peer's data stops
    /// until Inquiry Complete. Twice is a warning, once information; a peer still sending during it is nothing.
    @Test func inquiryStopsABusyLink() throws {
        func capture(times: Int, peerStops: Bool) -> Builder {
            var b = Builder()
            b.classicConnected(1000, handle: 0x0B)
            for _ in 0 ..< times {
                for _ in 0 ..< 10 { b.acl(100_000, .received, handle: 0x0B, cid: 0x0040, [UInt8](repeating: 1, count: 20)) }
                b.command(1000, 0x0401, [0x33, 0x8B, 0x9E, 0x02, 0x00])   // Inquiry, GIAC, 2 × 1.28 s
                b.commandStatus(1000, 0x0401, 0x00)
                if !peerStops { for _ in 0 ..< 20 { b.acl(120_000, .received, handle: 0x0B, cid: 0x0040, [1, 2, 3]) } }
                b.event(peerStops ? 2_560_000 : 160_000, 0x01, [0x00])   // Inquiry Complete
                b.acl(20_000, .received, handle: 0x0B, cid: 0x0040, [1, 2, 3])
            }
            return b
        }
        let twice = Self.of("radio.inquiry-contention", try Self.run(capture(times: 2, peerStops: true)))
        #expect(twice.count == 1 && twice.first?.severity == .warning, "\(twice.map(\.message))")
        #expect(twice.first?.cause?.kind == .radioContention)
        #expect(twice.first?.cause?.text.description.contains("Inquiry_Length 2 × 1.28 s") == true, "\(twice.map { $0.cause?.text.description ?? "" })")
        let once = Self.of("radio.inquiry-contention", try Self.run(capture(times: 1, peerStops: true)))
        #expect(once.count == 1 && once.first?.severity == .info, "\(once.map(\.message))")
        #expect(once.first?.frames.prefix(2) == [12, 14])   // the Inquiry, its Inquiry Complete
        #expect(Self.of("radio.inquiry-contention", try Self.run(capture(times: 2, peerStops: false))).isEmpty)
    }

    @Test func collisionsAndInstantPassed() throws {
        var b = Builder()
        b.leConnected(1000, handle: 0x40)
        b.event(1000, 0x3E, [0x03, 0x2A] + Builder.le16(0x40) + [0x18, 0x00, 0x00, 0x00, 0xC8, 0x00])   // Connection Update Complete 0x2A
        b.event(1000, 0x3E, [0x0C, 0x28] + Builder.le16(0x40) + [0x02, 0x02])                           // PHY Update Complete 0x28
        b.event(1000, 0x3E, [0x0C, 0x00] + Builder.le16(0x40) + [0x02, 0x02])                           // succeeded
        let f = try Self.run(b)
        #expect(Self.of("link.procedure-collision", f).map(\.frames) == [[2]])
        #expect(Self.of("link.instant-passed", f).map(\.frames) == [[3]])
    }

    /// An Approaching LSTO report (the bytes of android_darkelf_laser_projector_writecmd.btsnoop frame 611,
    /// handle 0x0005) on a link that survives is information (a weak link the app cannot mend); on a link lost
    /// right after, its link.disconnect (the warning) tells it.
    @Test func qualityReportInformsAndExplainsALoss() throws {
        let report = Hex.bytes("505802000500000cb6000000802552a80700000000000000000000000000000000780000000000000000000000000000000068f07b094083000acccccccc00000000cd2d0000000052a80700515d070009") ?? []
        var b = Builder()
        b.leConnected(1000, handle: 0x05)
        b.event(1000, 0xFF, Array(report.dropFirst()))
        let f = Self.of("radio.quality-report", try Self.run(b))
        #expect(f.count == 1 && f.first?.severity == .info && f.first?.cause?.kind == .linkQuality, "\(f.map(\.message))")
        b.disconnected(1000, handle: 0x05, reason: 0x08)
        let all = try Self.run(b)
        #expect(Self.of("radio.quality-report", all).isEmpty)
        let loss = try #require(Self.of("link.disconnect", all).first)
        #expect(loss.cause?.kind == .peerSilent && loss.cause?.text.description.contains("Approaching LSTO") == true, "\(String(describing: loss.cause))")
        #expect(loss.folded.first { $0.rule == "radio.quality-report" }?.count == 1)
    }

    @Test func onePageTimeoutIsInformation() throws {
        var b = Builder()
        let address: [UInt8] = [0x4A, 0x12, 0x00, 0xA5, 0x1D, 0x00]
        b.command(1000, 0x0405, address + [0x18, 0xCC, 0x01, 0x00, 0x00, 0x00, 0x01])   // Create Connection
        b.commandStatus(1000, 0x0405, 0x00)
        b.event(5_120_000, 0x03, [0x04, 0x00, 0x00] + address + [0x01, 0x00])          // Connection Complete: Page Timeout
        let f = Self.of("pool.page-timeouts", try Self.run(b))
        #expect(f.map(\.severity) == [.info] && f.first?.frames == [3, 1], "\(f.map(\.message))")
    }
}
