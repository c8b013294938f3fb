import Foundation
import Testing
import TestSupport
@testable import BLEAnalysis

/// docs/RULES.md's rule table is checked against `Rules.all` (issue 34: a new rule is its family
/// file, its `Rules.all` entry with its `RuleInfo`, and a test; the table row is then required by
/// this test, with the rule's id and severity as `RuleInfo` says).
@Suite struct RulesTableTests {
    /// The rows of the table under "| rule | severity | …": (id, severity cell, line number).
    static func rows() throws -> [(id: String, severity: String, line: Int)] {
        let text = try String(contentsOf: Repo.root.appendingPathComponent("docs/RULES.md"), encoding: .utf8)
        let lines = text.components(separatedBy: "\n")
        let header = try #require(lines.firstIndex { $0.hasPrefix("| rule | severity |") }, "docs/RULES.md has no rule table")
        var rows: [(String, String, Int)] = []
        for n in (header + 2) ..< lines.count {
            let line = lines[n]
            guard line.hasPrefix("|") else { break }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count > 3 else { continue }
            rows.append((cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`")), cells[2], n + 1))
        }
        return rows
    }

    /// The severity a cell names first ("warning (info if …)" → warning; "info (warning ≥ 20 s)" → info).
    static func firstSeverity(_ cell: String) -> Severity? {
        let words = cell.split { !$0.isLetter }.map(String.init)
        return words.lazy.compactMap { Severity(rawValue: $0) }.first
    }

    @Test("every rule of Rules.all has one row in docs/RULES.md, every row names a rule, and the severities agree")
    func tableMatchesRules() throws {
        let rows = try Self.rows()
        #expect(rows.count >= 40, "the table was not found whole: \(rows.count) rows")
        let rules = Dictionary(Rules.all.map { ($0.rule.id, $0.rule) }, uniquingKeysWith: { a, _ in a })
        var seen: [String: Int] = [:]
        for row in rows {
            if let line = seen[row.id] { Issue.record("docs/RULES.md lines \(line) and \(row.line) both document `\(row.id)`") }
            seen[row.id] = row.line
            guard let rule = rules[row.id] else {
                Issue.record("docs/RULES.md line \(row.line) documents `\(row.id)`, which is not in Rules.all")
                continue
            }
            #expect(Self.firstSeverity(row.severity) == rule.severity,
                    "docs/RULES.md line \(row.line): `\(row.id)` is \(rule.severity.rawValue) in its RuleInfo, the table says \"\(row.severity)\"")
            // The family: the id's prefix is the detector family (Detectors/<Family>Rules.swift).
            #expect(row.id.split(separator: ".").count == 2, "`\(row.id)`: FAMILY.name")
        }
        for id in rules.keys.sorted() where seen[id] == nil {
            Issue.record("`\(id)` is in Rules.all but has no row in docs/RULES.md's rule table")
        }
    }

    @Test("the check fails on a table that lacks a rule or names one that does not exist")
    func checkCanFail() {
        #expect(Self.firstSeverity("warning (info if a later CCCD write succeeds)") == .warning)
        #expect(Self.firstSeverity("info (warning ≥ 20 s)") == .info)
        #expect(Self.firstSeverity("severe") == nil)
        let ids = Set(Rules.all.map(\.rule.id))
        #expect(!ids.contains("no.such-rule"))
        #expect(ids.contains("link.disconnect"))
    }
}
