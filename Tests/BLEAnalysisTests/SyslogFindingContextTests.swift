import BLEAnalysis
import BLECapture
import Foundation
import Testing

/// A finding shows the host's own log lines logged just before it (PacketLogger syslog records):
/// "the app logged X 3 ms before the stall".
@Suite struct SyslogFindingContextTests {
    @Test func stallFindingCarriesTheAppLogLineBeforeIt() throws {
        let source = try CaptureFile(path: AnalysisFixtures.capture("flow_stall.btsnoop")).records().records
        // flow.skipped-ready's key evidence is the Number Of Completed Packets at frame 63.
        let stallTime = source[62].timestamp
        var w = PacketLoggerWriter(bigEndian: false)
        var inserted = false
        for r in source {
            if !inserted, r.timestamp >= stallTime - 3_000 {
                // u32 pid, u8 type, then process, sender, subsystem, category, message (NUL-terminated).
                let text = ["bluetoothd", "sender", "com.apple.bluetooth", "CBPeripheral",
                            "canSendWriteWithoutResponse = NO, queue full"].map { Array($0.utf8) + [0] }.flatMap { $0 }
                w.append(RecordToWrite(timestamp: stallTime - 3_000, direction: .unknown, kind: .syslog,
                                       payload: [0x2A, 0, 0, 0, 0x00] + text))
                inserted = true
            }
            var copy = r
            copy.rawType = nil
            w.append(copy)
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bleanalyze-syslog-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("stall.pklg").path
        try Data(w.bytes).write(to: URL(fileURLWithPath: path))

        let analyzer = Analyzer(detect: true)
        _ = try CaptureFile(path: path).read { analyzer.consume($0) }
        let stall = try #require(analyzer.finish().first { $0.rule == "flow.skipped-ready" })
        #expect(stall.logContext.contains { $0.contains("canSendWriteWithoutResponse = NO") && $0.contains("3 ms before") },
                "\(stall.logContext)")
    }
}
