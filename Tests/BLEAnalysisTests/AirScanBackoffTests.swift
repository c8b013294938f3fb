import BLEAnalysis
import BLECapture
import BLEProtocol
import Foundation
import TestSupport
import Testing

/// `adv.scan-backoff-ignored` on advertising channel captures built by `AirScanRuleTests.findings`
/// (nRF-style PHDR, link type 256, channel 39): an advertiser (C6:05:04:03:02:01) sends ADV_IND every 100 ms,
/// a scanner (D1:D2:D3:D4:D5:D6) sends a SCAN_REQ 400 µs after it when it asks, and the advertiser answers
/// with a SCAN_RSP 300 µs later when it does (Core v5.4 Vol 6 Part B 4.4.3).
@Suite struct AirScanBackoffTests {
    /// Per advertising event: whether the scanner asked, and whether its request was answered.
    static func capture(_ events: [(asked: Bool, answered: Bool)], name: String) throws -> [Finding] {
        try AirScanRuleTests.findings(events.map { AirScanEvent(asked: $0.asked, answered: $0.answered) }, rule: "adv.scan-backoff-ignored", name: name)
    }

    @Test func askingAtEveryEventAfterFailures() throws {
        // Nine events, the scanner asks after each ADV_IND (frames 1, 3, …, 17) and nothing answers: SCAN_REQs at
        // frames 2, 4, …, 18. The 8th failure (frame 16) reaches the threshold; the 9th updates the count.
        let f = try Self.capture(Array(repeating: (true, false), count: 9), name: "eager")
        #expect(f.map(\.frames) == [[16, 2]], "\(f.map(\.message))")
        #expect(f.first?.severity == .info)
        let text = f.first?.message.description ?? ""
        #expect(text.contains("Scanner D1:D2:D3:D4:D5:D6 asked C6:05:04:03:02:01 for its scan response after all 9 of its advertising events"), "\(text)")
    }

    @Test func counterExamples() throws {
        // Seven failures in a row: a compliant scanner asks that often with probability 1/256.
        #expect(try Self.capture(Array(repeating: (true, false), count: 7), name: "seven").isEmpty)
        // The scanner skipped one event after its second failure: it backs off.
        let skip = Array(repeating: (true, false), count: 2) + [(false, false)] + Array(repeating: (true, false), count: 10)
        #expect(try Self.capture(skip, name: "backs-off").isEmpty)
        // Answered requests reset the run: 6 failures, an answer, 6 failures.
        let reset = Array(repeating: (true, false), count: 6) + [(true, true)] + Array(repeating: (true, false), count: 6)
        #expect(try Self.capture(reset, name: "answered").isEmpty)
    }
}
