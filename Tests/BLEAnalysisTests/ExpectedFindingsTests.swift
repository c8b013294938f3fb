import BLEAnalysis
import BLECapture
import Foundation
import Testing

/// For every capture with an expected-findings file (`captures/<name>.expected.json`, written by the
/// capture script from what each scenario did, located with its own parser — never from this tool's
/// output), the detectors must find exactly that set of (rule, connection, first evidence frame):
/// nothing missing, nothing extra, and with the expected severity.
@Suite struct ExpectedFindingsTests {
    struct Key: Hashable, CustomStringConvertible {
        var rule: String
        var connection: Int?
        var frame: Int
        var severity: String
        var description: String { "\(severity) \(rule) conn \(connection.map(String.init) ?? "-") frame \(frame)" }
    }

    static func expectedFiles() throws -> [String] {
        let dir = AnalysisFixtures.repoRoot.appendingPathComponent("captures")
        return try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".expected.json") }.sorted()
    }

    @Test(arguments: try expectedFiles())
    func findingsEqualTheExpectedSet(file: String) throws {
        let url = AnalysisFixtures.repoRoot.appendingPathComponent("captures/\(file)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let capture = try #require(root["capture"] as? String)
        var expected = Set<Key>()
        for f in try #require(root["findings"] as? [[String: Any]]) {
            expected.insert(Key(rule: f["rule"] as? String ?? "?", connection: f["connection"] as? Int,
                                frame: f["frame"] as? Int ?? -1, severity: f["severity"] as? String ?? "?"))
        }
        let path = AnalysisFixtures.capture(capture)
        let file = try CaptureFile(path: path)
        let analyzer = Analyzer(detect: true)
        _ = file.read { analyzer.consume($0) }
        let findings = analyzer.finish()
        let found = Set(findings.map {
            Key(rule: $0.rule, connection: $0.connection.map(Int.init), frame: $0.frames.first ?? -1, severity: $0.severity.rawValue)
        })
        // Files that list causes (the cause_* scenarios of issue 23): each expected cause is the
        // finding's (kind, key frame); `null` means the finding states none.
        for f in try #require(root["findings"] as? [[String: Any]]) where f.keys.contains("cause") {
            let key = Key(rule: f["rule"] as? String ?? "?", connection: f["connection"] as? Int, frame: f["frame"] as? Int ?? -1,
                          severity: f["severity"] as? String ?? "?")
            guard let finding = findings.first(where: { $0.rule == key.rule && $0.connection.map(Int.init) == key.connection && $0.frames.first == key.frame })
            else { continue }
            if let cause = f["cause"] as? [String: Any] {
                #expect(finding.cause?.kind.rawValue == cause["kind"] as? String, "\(capture) \(key): cause \(String(describing: finding.cause?.kind))")
                #expect(finding.cause?.frames.first == cause["frame"] as? Int, "\(capture) \(key): cause frame \(String(describing: finding.cause?.frames.first))")
            } else if key.severity != "info" {
                #expect(finding.cause == nil, "\(capture) \(key): no cause expected, got \(String(describing: finding.cause?.kind))")
            }
        }
        let missing = expected.subtracting(found).sorted { $0.description < $1.description }
        let extra = found.subtracting(expected).sorted { $0.description < $1.description }
        #expect(missing.isEmpty, "\(capture): missing \(missing)")
        #expect(extra.isEmpty, "\(capture): unexpected \(extra)")
    }

    /// Clean captures have no warning or error at all.
    @Test(arguments: ["healthy.btsnoop", "healthy_peripheral.btsnoop", "long_read_write.btsnoop", "pairing_ok.btsnoop",
                      "extended_adv.btsnoop", "write_without_response.btsnoop", "flow_paced.btsnoop",
                      "mid_connection_start.btsnoop"])
    func cleanCaptureHasNoWarning(capture: String) throws {
        let analyzer = Analyzer(detect: true)
        _ = try CaptureFile(path: AnalysisFixtures.capture(capture)).read { analyzer.consume($0) }
        let serious = analyzer.finish().filter { $0.severity != .info }
        #expect(serious.isEmpty, "\(capture): \(serious.map { "\($0.rule) \($0.message)" })")
    }
}
