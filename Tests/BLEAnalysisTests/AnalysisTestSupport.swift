import TestSupport
import BLEAnalysis
import BLECapture
import Foundation

/// Paths and a one-call analysis for the analysis tests.
enum AnalysisFixtures {
    static let repoRoot: URL = Repo.root

    static func capture(_ name: String) -> String { repoRoot.appendingPathComponent("captures/\(name)").path }

    static let sharedReal: URL? = Repo.sharedReal

    /// Every HCI capture of the project and of the shared corpus (when present).
    static func allCaptures() throws -> [String] {
        let own = try FileManager.default.contentsOfDirectory(atPath: repoRoot.appendingPathComponent("captures").path)
            .filter { $0.hasSuffix(".btsnoop") || $0.hasSuffix(".pcap") || $0.hasSuffix(".pcapng") || $0.hasSuffix(".gz") }
            .map(capture)
        var real: [String] = []
        if let dir = sharedReal {
            real = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { !$0.hasSuffix(".md") && $0 != "SHA256SUMS" }
                .map { dir.appendingPathComponent($0).path }
        } else {
            print("notice: ../shared/captures/real absent; only the project's captures are used")
        }
        return (own + real).sorted()
    }

    static func analyze(_ path: String) throws -> (Analyzer, ReadSummary) {
        let (a, s, _) = try analyzeWithInfo(path)
        return (a, s)
    }

    static func analyzeWithInfo(_ path: String) throws -> (Analyzer, ReadSummary, CaptureInfo) {
        let file = try CaptureFile(path: path)
        let analyzer = Analyzer()
        let summary = file.read { analyzer.consume($0) }
        return (analyzer, summary, file.info)
    }

    static func run(_ executable: String, _ arguments: [String]) -> String? { Tool.run(executable, arguments) }
}

extension TimelineEvent {
    /// The free text a line carries (a line made outside the model, an air adapter's line, a syslog
    /// line); typed facts are compared as facts.
    var freeText: String? {
        switch fact {
        case let .said(text), let .air(text), let .log(text): return text
        default: return nil
        }
    }
}
