import Foundation
import Testing
import TestSupport

/// BLEReport formats; the analysis (BLEAnalysis: `Analyzer`, and `EvidenceCollector` for what the
/// HTML report needs) decides what is collected. No renderer drives the analysis (issue 26).
@Suite struct ReportTargetTests {
    @Test func bleReportNeverDrivesTheAnalysis() throws {
        let root = Repo.root.appendingPathComponent("Sources/BLEReport")
        let files = try #require(FileManager.default.enumerator(atPath: root.path)).compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
        #expect(files.count > 20, "Sources/BLEReport is where it was")
        var offenders: [String] = []
        for file in files {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                if code.contains(".consume(") || code.contains("Analyzer(") { offenders.append("\(file):\(n + 1): \(line)") }
            }
        }
        #expect(offenders.isEmpty, "BLEReport calls the analysis: \(offenders.joined(separator: "\n"))")
    }
}
