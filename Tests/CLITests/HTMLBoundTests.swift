import Foundation
import Testing
import TestSupport

/// The HTML report of a capture of many connections stays a page a browser opens: past 60
/// connections it is summarised (every connection counted in a table of peer groups, worst first;
/// the worst 30 in full), whatever the capture's size (issue 26).
@Suite struct HTMLBoundTests {
    /// A C compiler for the bench's generator (the Swift toolchain brings clang).
    static var compiler: String? { ["cc", "clang", "gcc"].first { Tool.available($0, ["--version"]) } }
    static var cc: Bool { compiler != nil }

    /// A `gen_btsnoop --shape writes` capture (the bench's second shape: short connections to ~300
    /// peers), generated into a temporary directory with the bench's generator.
    static func writesCapture(frames: Int, in dir: URL) throws -> String {
        let source = CLI.repoRoot.appendingPathComponent("scripts/bench/gen_btsnoop.c").path
        let generator = dir.appendingPathComponent("gen_btsnoop").path
        let capture = dir.appendingPathComponent("writes-\(frames).btsnoop").path
        let compiler = try #require(Self.compiler)
        let built = try Tool.outcome(URL(fileURLWithPath: "/usr/bin/env"), [compiler, "-O2", "-o", generator, source])
        try #require(built.status == 0, "cc: \(built.output)")
        let made = try Tool.outcome(URL(fileURLWithPath: generator),
                                    ["--frames", "\(frames)", "--seed", "1", "--no-read-by-type", "--shape", "writes", "-o", capture])
        try #require(made.status == 0, "gen_btsnoop: \(made.output)")
        return capture
    }

    @Test(.enabled(if: cc, "no C compiler (cc, clang, gcc) for the bench generator"))
    func manyConnectionsAreSummarisedByPeer() throws {
        let dir = try HTMLReportTests.temporaryDirectory("bound")
        defer { try? FileManager.default.removeItem(at: dir) }
        let capture = try Self.writesCapture(frames: 200_000, in: dir)
        let pagePath = dir.appendingPathComponent("page.html").path
        let r = try CLI.run(["report", capture, "-o", pagePath])
        #expect(r.status == 0, "\(r.stderr)")
        let page = try String(contentsOfFile: pagePath, encoding: .utf8)
        let report = try CLI.json(try CLI.run([capture, "--json"]).stdout)
        let connections = report["connections"] as? [[String: Any]] ?? []
        #expect(connections.count > 1000, "the capture has many connections (\(connections.count))")

        // Bounded: a few MB (it was 22 MB at 1M frames of this shape, growing with the capture).
        let size = try #require(FileManager.default.attributesOfItem(atPath: pagePath)[.size] as? Int)
        #expect(size < 5_000_000, "page of \(size) bytes")
        #expect(page.components(separatedBy: "<section class=\"connection\"").count - 1 == 30, "the worst 30 in full")
        #expect(page.hasSuffix("</html>\n"))
        // Every link inside the page has its target (connections without a section link to their
        // peer's row, findings a rule does not list to the rule).
        var ids = Set<Substring>()
        for part in page.components(separatedBy: " id=\"").dropFirst() { ids.insert(part.prefix { $0 != "\"" }[...]) }
        let dead = page.components(separatedBy: "href=\"#").dropFirst().map { $0.prefix { $0 != "\"" } }.filter { !ids.contains($0[...]) }
        #expect(dead.isEmpty, "links without a target: \(dead.prefix(5))")

        // Every peer group is in the summary, with its connections counted: together, every connection.
        var groups: [String: Int] = [:]
        for c in connections {
            let key = "\(c["adapter"] as? Int ?? 0)/\(c["peer"] as? String ?? "?")"
            groups[key, default: 0] += 1
        }
        let rows = page.components(separatedBy: "<tr id=\"peer-").dropFirst()
        #expect(rows.count == groups.count, "one summary row per peer group")
        var counted = 0
        var titles: [String] = []
        for row in rows {
            guard let td = row.range(of: "<td>"), let end = row.range(of: "</td><td>", range: td.upperBound ..< row.endIndex),
                  let colon = row.range(of: ":", range: end.upperBound ..< row.endIndex),
                  let n = Int(row[end.upperBound ..< colon.lowerBound]) else {
                Issue.record("unreadable summary row: \(row.prefix(200))")
                continue
            }
            titles.append(String(row[td.upperBound ..< end.lowerBound]))
            counted += n
        }
        #expect(counted == connections.count, "the summary counts every connection")
        for key in groups.keys {
            let address = String(key.split(separator: "/", maxSplits: 1).last ?? "")
            guard address != "?" else { continue }
            #expect(titles.contains { $0.contains(address) }, "peer \(address) is in the summary")
        }
    }

    /// The summarised page in headless Chromium: its script ran, no error, 30 peer lanes plus the radio lane.
    @Test(.enabled(if: cc && HTMLReportTests.browser, "no C compiler, or chromium or python3 not installed"))
    func summarisedPageWorksInABrowser() throws {
        let chromium = try #require(HTMLReportTests.chromium)
        let dir = try HTMLReportTests.temporaryDirectory("bound-browser")
        defer { try? FileManager.default.removeItem(at: dir) }
        let capture = try Self.writesCapture(frames: 200_000, in: dir)
        let page = dir.appendingPathComponent("page.html")
        #expect(try CLI.run(["report", capture, "-o", page.path]).status == 0)
        let dom = HTMLReportTests.dumpDOMs(chromium, [page], profile: dir.appendingPathComponent("profile").path)[0]
        #expect(dom.contains("data-ready=\"1\""), "the page script did not finish")
        #expect(!dom.contains(" data-errors=\""), "script errors")
        #expect(HTMLReportTests.laneCount(dom) == 31, "30 peers and the radio lane")
    }
}
