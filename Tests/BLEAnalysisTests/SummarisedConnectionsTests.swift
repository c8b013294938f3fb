import BLEAnalysis
import BLECapture
import Foundation
import Testing
import TestSupport

/// Issue 32, memory flat over a long session: past `SummaryPolicy.finishedConnections` the oldest
/// finished connections are summarised (`ConnectionRetirement`), and every rule decides of them what
/// it would have at the end. The property: summarising every connection as soon as it may be
/// (keep 0) changes no finding — same rule, connection, severity, actor, time, frames, message, why,
/// peer, folds — over a long session made here and every capture of the project and the real corpus.
@Suite struct SummarisedConnectionsTests {
    static func temporary(_ bytes: [UInt8]) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("bleanalyze-summary-\(getpid())-\(UInt32.random(in: 0 ... .max)).btsnoop")
        try Data(bytes).write(to: url)
        return url.path
    }

    /// The capture through the pass with this policy: the analyzer (its model) and the findings.
    static func run(_ path: String, keep: Int?, infoPerRule: Int = .max) throws -> (Analyzer, [Finding]) {
        var configuration = RuleConfiguration()
        configuration.summary.finishedConnections = keep
        configuration.summary.infoFindingsPerRule = infoPerRule
        let analyzer = Analyzer(detect: true, configuration: configuration)
        _ = try CaptureFile(path: path).read { analyzer.consume($0) }
        return (analyzer, analyzer.finish())
    }

    /// Everything a finding says.
    static func key(_ f: Finding) -> String {
        let cause = f.cause.map { "\($0.kind.rawValue) \($0.frames) \($0.text)" } ?? "-"
        let folded = f.folded.map { "\($0.rule) \($0.count) \($0.frames)" }.joined(separator: "; ")
        return "\(f.rule) \(f.severity) \(f.actor) c\(f.connectionIndex ?? 0)/\(f.connection ?? 0) t\(f.time) \(f.frames) | \(f.message) | \(cause) | "
            + "\(f.peer ?? "-") \(f.peerName ?? "-") h\(f.handle ?? 0) \(f.uuid?.description ?? "-") s\(f.status ?? 0) | \(folded)"
    }

    static func compare(_ path: String) throws -> (summarised: Int, differences: [String]) {
        let (whole, all) = try run(path, keep: nil)
        let (summarising, some) = try run(path, keep: 0)
        let name = URL(fileURLWithPath: path).lastPathComponent
        var differences: [String] = []
        let a = all.map(key).sorted(), b = some.map(key).sorted()
        if a != b {
            for k in Set(a).subtracting(b).sorted().prefix(3) { differences.append("\(name): only kept whole: \(k)") }
            for k in Set(b).subtracting(a).sorted().prefix(3) { differences.append("\(name): only summarising: \(k)") }
            if Set(a) == Set(b) { differences.append("\(name): the same findings, counted differently") }
        }
        if whole.session.connectionCount != summarising.session.connectionCount {
            differences.append("\(name): \(whole.session.connectionCount) connections, \(summarising.session.connectionCount) summarising")
        }
        return (summarising.session.summarised.count, differences)
    }

    @Test func aLongSessionIsSummarisedWithTheSameFindings() throws {
        let path = try Self.temporary(CaptureBuilder.longSession(connections: 60))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (summarised, differences) = try Self.compare(path)
        #expect(differences.isEmpty, "\(differences.joined(separator: "\n"))")
        // All but the last few (the pass looks every 256 frames, ~12 connections here) and those a
        // rule keeps for the end: the refused writes (every 7th, security.insufficient decides at the end).
        #expect(summarised >= 40, "\(summarised) of 60 summarised")
        let (analyzer, findings) = try Self.run(path, keep: 0)
        // The findings read from the frames: 60 disconnects (6 lost links warn), 8 refused writes.
        #expect(findings.filter { $0.rule == "link.disconnect" }.count == 60)
        #expect(findings.filter { $0.rule == "link.disconnect" && $0.severity == .warning }.count == 6)
        #expect(findings.filter { $0.rule == "security.insufficient" }.count == 8)
        #expect(analyzer.session.connections.count + analyzer.session.summarised.count == 60)
        // Kept whole: the refused ones are among those held to the end.
        for f in findings where f.rule == "security.insufficient" {
            #expect(analyzer.session.connection(f.connectionIndex ?? 0) != nil, "\(f.connectionIndex ?? 0) kept for the end")
        }
    }

    @Test func everyCaptureGivesTheSameFindingsSummarised() throws {
        var summarised = 0, differences: [String] = []
        for path in try AnalysisFixtures.allCaptures() {
            let r = try Self.compare(path)
            summarised += r.summarised
            differences += r.differences
        }
        #expect(differences.isEmpty, "\(differences.count):\n\(differences.prefix(20).joined(separator: "\n"))")
        // The real corpus has links that end long before their captures do (21 connections of one
        // iOS log, six reconnects of another): the property is tested on them.
        if AnalysisFixtures.sharedReal != nil { #expect(summarised >= 40, "\(summarised) connections summarised over the corpus") }
    }

    /// Past the cap, a rule's info findings of summarised connections are counted, not kept; warnings
    /// and errors always are.
    @Test func infoFindingsPastTheCapAreCounted() throws {
        let path = try Self.temporary(CaptureBuilder.longSession(connections: 60))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (_, all) = try Self.run(path, keep: nil)
        let (analyzer, capped) = try Self.run(path, keep: 0, infoPerRule: 3)
        let counted = try #require(analyzer.engine).summarisedInfo
        #expect(counted["link.disconnect", default: 0] > 20, "\(counted)")
        for rule in Set(all.map(\.rule)) {
            let before = all.filter { $0.rule == rule }, after = capped.filter { $0.rule == rule }
            #expect(after.filter { $0.severity != .info }.map(Self.key).sorted() == before.filter { $0.severity != .info }.map(Self.key).sorted(), "\(rule)")
            #expect(after.filter { $0.severity == .info }.count + counted[rule, default: 0] == before.filter { $0.severity == .info }.count, "\(rule)")
        }
    }
}
