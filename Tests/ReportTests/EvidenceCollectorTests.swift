import Testing
import TestSupport
import BLECapture
import BLEBytes
@testable import BLEReport
@testable import BLEAnalysis

/// The HTML report's evidence windows, gathered during the analysis pass (`EvidenceCollector`).
@Suite struct EvidenceCollectorTests {
    static func collect(_ path: String, around: Int = 3, maxDecoded: Int = EvidenceCollector.maxDecodedFrames) throws -> (ReportExtras, [Finding]) {
        let file = try CaptureFile(path: path)
        let analyzer = Analyzer(detect: true)
        let collector = EvidenceCollector(analyzer: analyzer, around: around, maxDecoded: maxDecoded)
        let summary = file.read { collector.consume($0) }
        let findings = analyzer.finish()
        return (collector.finish(findings: findings, captureEnd: summary.lastTimestamp), findings)
    }

    /// The ring finds a frame by number while it is kept, with its own bytes, and nothing after it
    /// was overwritten; numbers that skip (a reader that drops records) are still found.
    @Test(arguments: [1, 3])
    func recentFramesFindKeptFrames(step: Int) {
        var ring = RecentFrames(capacity: 8)
        for i in 1 ... 100 {
            let n = i * step
            let bytes: [UInt8] = [UInt8(n & 0xFF), 0x20, 0x00]
            bytes.withUnsafeBytes { payload in
                ring.push(Frame(number: n, timestamp: Int64(n) * 1000, direction: .sent, kind: .command, adapter: 0,
                                recordOffset: n * 10, payloadOffset: n * 10 + 4, payload: payload, originalLength: 3, rawType: 1))
            }
        }
        for i in 93 ... 100 {
            let k = ring.frame(i * step)
            #expect(k?.number == i * step)
            #expect(k?.bytes == [UInt8((i * step) & 0xFF), 0x20, 0x00])
            #expect(k?.timestamp == Int64(i * step) * 1000)
        }
        #expect(ring.frame(92 * step) == nil)
        #expect(ring.frame(101 * step) == nil)
        if step > 1 { #expect(ring.frame(100 * step - 1) == nil) }
    }

    /// With a budget too small for every window, each finding keeps the window of its key frame:
    /// the budget is not spent by the first findings (a real Android session with ~50 findings).
    @Test(.enabled(if: Repo.sharedReal != nil, "../shared/captures/real is absent"))
    func everyFindingKeepsItsKeyWindow() throws {
        let path = try #require(Repo.sharedReal).appendingPathComponent("android_pongbot_prepwrite_indicate.btsnoop").path
        let (all, findings) = try Self.collect(path)
        let everything = Set(all.frames.map(\.number))
        let last = try #require(everything.max())
        var key = Set<Int>()
        for f in findings { if let c = f.frames.first { key.formUnion(max(1, c - 3) ... min(c + 3, last)) } }
        // The key windows are a part of all windows, so a budget of their size must choose.
        #expect(key.isSubset(of: everything))
        #expect(key.count < everything.count)
        let (tight, _) = try Self.collect(path, maxDecoded: key.count)
        let shown = Set(tight.frames.map(\.number))
        #expect(key.isSubset(of: shown), "key frames without their window: \(key.subtracting(shown).sorted().prefix(20))")
        #expect(shown.count <= key.count)
        // Frames come out in order, each once.
        #expect(tight.frames.map(\.number) == shown.sorted())
    }

    /// Findings added at the end (`pool.page-timeouts` cites attempts from frame 197 on; the pass
    /// ends past frame 8000) get their windows from the frames kept as notable.
    @Test(.enabled(if: Repo.sharedReal != nil, "../shared/captures/real is absent"))
    func endOfPassFindingsHaveWindows() throws {
        let path = try #require(Repo.sharedReal).appendingPathComponent("android_pongbot_prepwrite_indicate.btsnoop").path
        let (extras, findings) = try Self.collect(path)
        let shown = Set(extras.frames.map(\.number))
        let timeouts = try #require(findings.first { $0.rule == "pool.page-timeouts" })
        for c in timeouts.frames.prefix(4) {
            #expect(Set(max(1, c - 3) ... c + 3).isSubset(of: shown), "window around \(c)")
            #expect(extras.frameTimes[c] != nil)
        }
        #expect(timeouts.frames.contains(197))
        #expect(EvidenceCollector.ringCapacity < 8000 - 197)
    }
}
