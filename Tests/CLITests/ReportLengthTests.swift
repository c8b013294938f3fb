import Foundation
import Testing

/// The text report stays readable on a long, busy phone log: pongbot (14 connections, 278 attempts,
/// 229 failed pages over 1 h 40 min) fits in 150 lines and still names every distinct problem (each
/// rule with a warning or error in the JSON); `--all` prints everything.
@Suite(.enabled(if: CLI.sharedReal != nil, "../shared/captures/real is absent"))
struct ReportLengthTests {
    @Test func pongbotFitsAndNamesEveryProblem() throws {
        let path = try #require(CLI.sharedReal).appendingPathComponent("android_pongbot_prepwrite_indicate.btsnoop").path
        let text = try CLI.run([path])
        #expect(text.status == 0)
        let lines = text.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count <= 150, "\(lines.count) lines")
        #expect(lines.allSatisfy { $0.count <= 100 }, "wider than 100 columns when not a terminal")
        let json = try CLI.json(try CLI.run([path, "--json"]).stdout)
        let problems = Set((json["findings"] as? [[String: Any]] ?? []).filter { $0["severity"] as? String != "info" }.compactMap { $0["rule"] as? String })
        #expect(!problems.isEmpty)
        for rule in problems { #expect(text.stdout.contains(rule), "the report does not name \(rule)") }
        let all = try CLI.run([path, "--all"]).stdout
        #expect(all.split(separator: "\n").count > lines.count)
        #expect(all.contains("gatt.subscription-silent —"), "--all prints the information findings in full")
    }
}
