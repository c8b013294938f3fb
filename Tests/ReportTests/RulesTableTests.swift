import Foundation
import Testing
import TestSupport
import BLEAnalysis
@testable import BLEReport

/// docs/RULES.md's rule table is generated from `Rules.all` (`RuleInfo.doc`, `make rules-doc`), so a
/// new rule is its family file, its `Rules.all` entry and a test (issue 34). These tests fail when the
/// file's table is stale or the generator loses a rule.
@Suite struct RulesTableTests {
    /// The table's lines in docs/RULES.md: from its header to the first line that is not a row.
    static func fileTable() throws -> (text: String, line: Int) {
        let text = try String(contentsOf: Repo.root.appendingPathComponent("docs/RULES.md"), encoding: .utf8)
        let lines = text.components(separatedBy: "\n")
        let header = try #require(lines.firstIndex { $0 == RulesMarkdown.header }, "docs/RULES.md has no rule table")
        var end = header
        while end < lines.count, lines[end].hasPrefix("|") { end += 1 }
        return (lines[header ..< end].joined(separator: "\n") + "\n", header + 1)
    }

    @Test("docs/RULES.md's rule table is the one made from Rules.all (run `make rules-doc` after changing a rule)")
    func tableIsGenerated() throws {
        let (file, line) = try Self.fileTable()
        let made = RulesMarkdown.table(Rules.infos)
        if file != made {
            let a = file.components(separatedBy: "\n"), b = made.components(separatedBy: "\n")
            let first = (0 ..< min(a.count, b.count)).first { a[$0] != b[$0] } ?? min(a.count, b.count)
            Issue.record("""
                docs/RULES.md's rule table is stale from line \(line + first): run `make rules-doc`.
                file:      \(first < a.count ? String(a[first].prefix(160)) : "(end)")
                generated: \(first < b.count ? String(b[first].prefix(160)) : "(end)")
                """)
        }
    }

    @Test("the generated table has one row per rule, with the rule's severity first")
    func oneRowPerRule() {
        let rows = RulesMarkdown.table(Rules.infos).split(separator: "\n").dropFirst(2)
        #expect(rows.count == Rules.all.count)
        #expect(Set(Rules.infos.map(\.id)).count == Rules.all.count, "two rules share an id")
        for (row, rule) in zip(rows, Rules.infos) {
            let cells = row.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(cells.count == 6, "`\(rule.id)`: a cell holds a bare pipe")
            #expect(cells[1] == "`\(rule.id)`")
            // The severity column may say more ("warning (info if …)"), but it starts from the rule's severity.
            let first = cells[2].split { !$0.isLetter }.lazy.compactMap { Severity(rawValue: String($0)) }.first
            #expect(first == rule.severity, "`\(rule.id)` is \(rule.severity.rawValue), its row says \"\(cells[2])\"")
            #expect(rule.id.split(separator: ".").count == 2, "`\(rule.id)`: FAMILY.name")
            #expect(!rule.doc.firesWhen.isEmpty && !rule.doc.evidence.isEmpty, "`\(rule.id)` has no doc")
        }
    }

    @Test("a cell cannot end early: pipes and line breaks in a rule's doc are escaped")
    func cellsAreEscaped() {
        #expect(RulesMarkdown.cell("a | b\nc") == "a \\| b c")
    }
}
