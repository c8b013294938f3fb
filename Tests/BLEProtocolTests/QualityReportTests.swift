import Testing
import BLEBytes
@testable import BLEProtocol

/// Android's Bluetooth Quality Report (Vendor Specific event 0xFF, sub-event 0x58; `QualityReport`).
@Suite struct QualityReportTests {
    /// Frame 611 of android_darkelf_laser_projector_writecmd.btsnoop (the H4 byte left out), as tshark shows
    /// its bytes: an Approaching LSTO report for handle 0x0005 right before that link's supervision timeout.
    /// Read by hand: report 0x02, packet type 0x00, handle 0x0005, role 0x00 (central), TX power 0x0c (12 dBm),
    /// RSSI 0xb6 (−74 dBm), SNR 0, 0 unused and 0 unideal AFH channels, LSTO 0x2580, then the counters.
    static let darkelf = HCITest.bytes(
        "ff505802000500000cb6000000802552a80700000000000000000000000000000000780000000000000000000000000000000068f07b094083000acccccccc00000000cd2d0000000052a80700515d070009")

    @Test func decodesTheRealReport() throws {
        guard case let .qualityReport(q) = try HCITest.typedEvent(Self.darkelf) else {
            Issue.record("not decoded as a quality report")
            return
        }
        #expect(q.kind == .approachingLSTO)
        #expect(q.handle == 0x0005 && q.role == 0 && q.txPower == 12 && q.rssi == -74 && q.snr == 0)
        #expect(q.unusedAFHChannels == 0 && q.unidealAFHChannels == 0)
        // 0x2580 slots of 0.625 ms: the 6 s supervision timeout the link's last LE Connection Update Complete set.
        #expect(q.lstoTicks == 0x2580 && q.lstoMillis == 6000)
        let layer = HCITest.decode(.event, Self.darkelf)
        #expect(layer.name == "Vendor: Android Bluetooth Quality Report")
        #expect(layer.error == nil)
    }

    /// Too short for its layout, another sub-event, an unknown report id: a plain vendor event, never an error.
    @Test func otherVendorEventsStayVendor() throws {
        for length in [2, 3, 10, 49] {
            var cut = Array(Self.darkelf.prefix(length))
            cut[1] = UInt8(length - 2)
            guard case .other = try HCITest.typedEvent(cut) else { Issue.record("prefix \(length) typed"); continue }
            #expect(HCITest.decode(.event, cut).name == "Vendor")
        }
        var other = Self.darkelf
        other[2] = 0x57
        guard case .other = try HCITest.typedEvent(other) else { Issue.record("sub-event 0x57 typed"); return }
        var unknown = Self.darkelf
        unknown[3] = 0x42
        guard case .other = try HCITest.typedEvent(unknown) else { Issue.record("report 0x42 typed"); return }
        // The Broadcom vendor events of android_pongbot_prepwrite_indicate.btsnoop (ff 06 90 12 …) are not reports.
        guard case .other = try HCITest.typedEvent(HCITest.bytes("ff0690127518000000")) else { Issue.record("Broadcom event typed"); return }
    }
}
