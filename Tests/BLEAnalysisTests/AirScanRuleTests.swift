import BLEAnalysis
import BLECapture
import BLEProtocol
import Foundation
import TestSupport
import Testing

/// `adv.scan-response-missing` on advertising channel captures built here (nRF-style PHDR, link type 256):
/// one advertiser (C6:05:04:03:02:01, random) sends ADV_IND on channel 39 (PHDR RF channel 39) every
/// 100 ms and a scanner (D1:D2:D3:D4:D5:D6) sends a SCAN_REQ 400 µs after each; the advertiser's SCAN_RSP
/// follows 300 µs later when it answers (Core v5.4 Vol 6 Part B 4.4.3).
@Suite struct AirScanRuleTests {
    static let advertiser: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0xC6]
    static let scanner: [UInt8] = [0xD6, 0xD5, 0xD4, 0xD3, 0xD2, 0xD1]

    /// The findings of `rule` on a capture of `events`, 100 ms apart, then one more ADV_IND (the advertising goes on).
    static func findings(_ events: [AirScanEvent], rule: String, name: String) throws -> [Finding] {
        let t0: Int64 = 1_700_000_000_000_000
        var packets: [AirCaptureBuilder.Packet] = []
        func adv(_ time: Int64, _ header0: UInt8, _ payload: [UInt8]) {
            packets.append(.init(time: time, bytes: AirCaptureBuilder.packet(
                linkType: 256, aa: LinkLayer.advertisingAccessAddress, crcInit: LinkLayer.advertisingCRCInit, header0: header0,
                payload: payload, direction: .advertising, channel: 39)))
        }
        let data: [UInt8] = [0x02, 0x01, 0x06]
        for (e, x) in events.enumerated() {
            let t = t0 + Int64(e) * 100_000
            if x.heard { adv(t, 0x40, Self.advertiser + data) }                               // ADV_IND, TxAdd random
            if x.asked { adv(t + 400, 0xC3, Self.scanner + Self.advertiser) }                   // SCAN_REQ, both random
            if x.asked && x.answered { adv(t + 700, 0x44, Self.advertiser + [0x04, 0x09, 0x4C, 0x45, 0x44]) }   // SCAN_RSP "LED"
        }
        adv(t0 + Int64(events.count) * 100_000, 0x40, Self.advertiser + data)
        let path = try AirCaptureTests.temporary("air_scan_\(name).pcap", AirCaptureBuilder.pcap(linkType: 256, packets))
        return try AirCaptureTests.analyze(path, detect: true).1.filter { $0.rule == rule }
    }

    /// Per advertising event: whether the sniffer heard the ADV_IND, and whether a SCAN_RSP answered.
    static func capture(_ events: [(heard: Bool, answered: Bool)], name: String) throws -> [Finding] {
        try findings(events.map { AirScanEvent(heard: $0.heard, answered: $0.answered) }, rule: "adv.scan-response-missing", name: name)
    }

    @Test func unansweredScanRequests() throws {
        // Three answered events (frames 1–9), then 17 unanswered: SCAN_REQs at frames 11, 13, …, 43.
        let f = try Self.capture(Array(repeating: (true, true), count: 3) + Array(repeating: (true, false), count: 17), name: "deaf")
        #expect(f.map(\.frames) == [[11, 43]], "\(f.map(\.message))")
        #expect(f.first?.severity == .info)
        let text = f.first?.message.description ?? ""
        #expect(text.contains("LED (C6:05:04:03:02:01) left 17 scan requests in a row unanswered (frames 11–43, 1.6 s, from one scanner)"), "\(text)")
        #expect(text.contains("over the capture it answered 3 of 20"), "\(text)")
    }

    @Test func counterExamples() throws {
        // An advertiser that answers.
        #expect(try Self.capture(Array(repeating: (true, true), count: 20), name: "answers").isEmpty)
        // 15 in a row: within what the scanner backoff resolves.
        #expect(try Self.capture(Array(repeating: (true, false), count: 15), name: "fifteen").isEmpty)
        // The sniffer does not hear the advertiser (only the scanner's requests): its silence proves nothing.
        #expect(try Self.capture(Array(repeating: (false, false), count: 20), name: "far").isEmpty)
    }
}

/// One advertising event of `AirScanRuleTests.findings`: the advertiser's ADV_IND (when the sniffer heard it),
/// the scanner's SCAN_REQ 400 µs later (when it asked), and the advertiser's SCAN_RSP 300 µs after that (when
/// it answered).
struct AirScanEvent {
    var heard: Bool
    var asked: Bool
    var answered: Bool

    init(heard: Bool = true, asked: Bool = true, answered: Bool) {
        (self.heard, self.asked, self.answered) = (heard, asked, answered)
    }
}
