import BLEBytes
import BLECapture
import BLEProtocol
import Foundation
import Testing
import TestSupport
@testable import BLEAnalysis
@testable import BLEReport

/// Issue 24, "Small things a reader trips on": what the text says of captures of kinds it was not
/// tuned on (PacketLogger's coarse clock, ACL-only exports, padded names, Qualcomm's debug handle).
@Suite struct TrustTextTests {
    @Test func latencyBelowTheClockStepIsNotZero() {
        #expect(TimeFormat.duration(0, clockStep: 1000) == "< 1.0 ms")
        #expect(TimeFormat.duration(0, clockStep: 1) == "0 µs")
        #expect(TimeFormat.duration(2000, clockStep: 1000) == "2.0 ms")
    }

    @Test(.enabled(if: Repo.sharedReal != nil, "../shared/captures/real is absent"))
    func packetLoggerClockAndACLOnlyExport() throws {
        // PacketLogger with a clock of whole seconds: a read answered within the same tick.
        let (blueheron, _) = try StoryTextTests.analyze(try #require(StoryTextTests.real("blueheron_packetlogger_six_reconnects.pklg")))
        let second = blueheron.session.connections[1]
        #expect(second.att.clockStep == 1_000_000)
        let line = try #require(SessionText.requestSummary(second, sentByHost: false))
        #expect(line.text.hasSuffix("in < 1.0 s"), "\(line.text)")
        #expect(!SessionText.timeline(blueheron.session).contains("0 µs"))
        // An ACL-only export: the connection began before the capture, so its span is a lower bound.
        let (revcar, _) = try StoryTextTests.analyze(try #require(StoryTextTests.real("android_revcar_acl_only_no_hci.btsnoop")))
        #expect(revcar.statistics.holdsNoHCIEvents)
        #expect(SessionText.header(revcar.session.connections[0]).hasSuffix("open until the capture ended (at least 21.2 s)"))
    }

    @Test func paddedNamesAreTrimmed() {
        #expect(Advertisers.displayName(Array("Dev".utf8) + [0, 0, 0]) == "Dev")
        #expect(Advertisers.displayName(Array("Dev 1".utf8) + [0xFF, 0xFF, 0x41]) == "Dev 1")
        #expect(Advertisers.displayName(Array("  Dev  ".utf8)) == "Dev")
        #expect(Advertisers.displayName([0xFF, 0xFF]) == nil)
        #expect(Advertisers.displayName([0x20, 0x00]) == nil)
    }

    @Test func qualcommDebugHandleIsNamedInPackets() throws {
        let bytes: [UInt8] = [0xDC, 0x2E, 0x03, 0x00, 0x01, 0x02, 0x03]
        let layer = bytes.withUnsafeBytes { b -> Layer in
            var r = ByteReader(b, base: 0)
            return HCIDecoder.decode(.acl, &r)
        }
        let handle = try #require(layer.fields.first { $0.nameString == "Handle" })
        guard case let .integer(v, .named(_, table)) = handle.value else {
            Issue.record("the handle is not named: \(handle.value)")
            return
        }
        #expect(v == 0x0EDC)
        #expect(table.name(v) == "Qualcomm debug log, not a connection")
    }
}
