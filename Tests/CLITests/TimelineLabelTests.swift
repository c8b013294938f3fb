import BLECapture
import Foundation
import TestSupport
import Testing

/// The timeline's labels as a person sees them: each report is loaded in headless Chromium with
/// scripts/reports/measure-labels.js appended, which measures every `<text>` of `svg#timeline`
/// (getBoundingClientRect) and writes into the DOM how many pairs overlap and how many are cut off
/// by the svg or the plot's clip path. Before the labels were placed, pongbot's page had 591
/// overlapping pairs; every page must have none. Each finding's key frame must be decoded in the page.
@Suite struct TimelineLabelTests {
    static var corpusAndBrowser: Bool { HTMLReportTests.browser && CLI.sharedReal != nil }
    static var browser: Bool { HTMLReportTests.browser }

    struct Measure {
        var texts = -1, overlaps = -1, clipped = -1
        var details = ""
    }

    @Test(.enabled(if: corpusAndBrowser, "needs chromium, python3 and ../shared/captures/real"))
    func realCapturesHaveNoOverlappingOrCutLabels() throws {
        let captures = (try CLI.allCaptures()).filter { $0.hasPrefix(CLI.sharedReal!.path) }
        try check(captures, name: "real")
    }

    @Test(.enabled(if: browser, "needs chromium and python3"))
    func projectCapturesHaveNoOverlappingOrCutLabels() throws {
        try check(try HTMLReportTests.reportCaptures().map(CLI.capture), name: "own")
    }

    /// However many events: 90 connections to 90 peers (the timeline draws 60 lanes) and 400 failed
    /// connection attempts, all within 2 s, every connection ending with a disconnect reason — far
    /// denser than any real log. Built with the capture writer from HCI packets
    /// (Core v5.4 Vol 4 Part E 7.8.12 LE Create Connection, 7.7.15 Command Status,
    /// 7.7.65.1 LE Connection Complete, 7.7.5 Disconnection Complete).
    @Test(.enabled(if: browser, "needs chromium and python3"))
    func denseSyntheticCaptureHasNoOverlappingOrCutLabels() throws {
        var b = CaptureBuilder()
        var rng = SplitMix64(seed: 15)
        let t0: Int64 = 1_700_000_000_000_000
        func address(_ peer: UInt8) -> [UInt8] { [peer, 0x22, 0x33, 0x44, 0x55, 0xC6] }
        var times: [(Int64, Int)] = []
        for i in 0 ..< 490 { times.append((Int64(rng.next() % 2_000_000), i)) }
        var disconnects: [(Int64, UInt16, UInt8)] = []
        for (t, i) in times.sorted(by: { $0.0 < $1.0 }) {
            let peer = UInt8(i % 250)
            b.seek(to: t0 + t)
            b.leCreateConnection(0, peer: address(peer))
            b.commandStatus(300, 0x200D, 0x00)
            if i < 90 {
                let handle = UInt16(0x40 + i)
                b.leConnected(1_700, handle: handle, peer: address(peer), timeout: 0x01F4)
                let reasons: [UInt8] = [0x08, 0x13, 0x16, 0x3E, 0x22]
                disconnects.append((t0 + t + 5_000 + Int64(rng.next() % 300_000), handle, reasons[i % reasons.count]))
            } else {
                b.leConnected(1_700, handle: 0, status: 0x3E, peer: address(peer), timeout: 0x01F4)
            }
        }
        for (t, h, r) in disconnects.sorted(by: { $0.0 < $1.0 }) {
            b.seek(to: t)
            b.disconnected(0, handle: h, reason: r)
        }
        let capture = try CLI.temporaryFile("dense.btsnoop", b.bytes)
        let connections = try CLI.json(try CLI.run([capture, "--json"]).stdout)["connections"] as? [Any] ?? []
        #expect(connections.count == 90, "the capture holds what it was built with")
        try check([capture], name: "dense")
    }

    func check(_ captures: [String], name: String) throws {
        let dir = try HTMLReportTests.temporaryDirectory("labels-\(name)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = try String(contentsOf: CLI.repoRoot.appendingPathComponent("scripts/reports/measure-labels.js"), encoding: .utf8)
        var pages: [URL] = []
        for capture in captures {
            let page = dir.appendingPathComponent(URL(fileURLWithPath: capture).lastPathComponent + ".html")
            let r = try CLI.run(["report", capture, "-o", page.path])
            #expect(r.status == 0, "\(capture): \(r.stderr)")
            var html = try String(contentsOf: page, encoding: .utf8)
            #expect(html.contains("<svg id=\"timeline\""), "\(capture): the timeline is one inline svg#timeline")
            // Each finding links to its decoded evidence: its key frame is a link into the page.
            for row in html.components(separatedBy: "<tr id=\"finding-").dropFirst() {
                let cells = row.components(separatedBy: "</tr>")[0]
                #expect(!cells.contains("class=\"frames\"><span"), "\(capture): finding \(cells.prefix { $0 != "\"" }) has no decoded evidence")
            }
            html = html.replacingOccurrences(of: "</body></html>", with: "<script>\(script)</script>\n</body></html>")
            try html.write(to: page, atomically: true, encoding: .utf8)
            pages.append(page)
        }
        let chromium = try #require(HTMLReportTests.chromium)
        // A desktop-sized window: the page as a person reads it.
        let doms = HTMLReportTests.dumpDOMs(chromium, pages, profile: dir.appendingPathComponent("profile").path, window: "1400,1000")
        var total = 0
        for (i, capture) in captures.enumerated() {
            let m = Self.measure(doms[i])
            let file = URL(fileURLWithPath: capture).lastPathComponent
            #expect(m.texts > 0, "\(file): the measuring script did not run (no label counted)")
            #expect(m.overlaps == 0, "\(file): \(m.overlaps) pairs of timeline labels overlap\n\(m.details)")
            #expect(m.clipped == 0, "\(file): \(m.clipped) timeline labels are cut off\n\(m.details)")
            total += max(m.texts, 0)
        }
        print("timeline labels measured in Chromium: \(total) on \(captures.count) pages")
    }

    /// Reads `<pre id="label-check" data-texts=… data-overlaps=… data-clipped=…>details</pre>`.
    static func measure(_ dom: String) -> Measure {
        guard let start = dom.range(of: "<pre id=\"label-check\"") else { return Measure() }
        let rest = dom[start.upperBound...]
        let tagEnd = rest.firstIndex(of: ">") ?? rest.endIndex
        let tag = rest[..<tagEnd]
        func attribute(_ name: String) -> Int {
            guard let r = tag.range(of: "\(name)=\"") else { return -1 }
            return Int(tag[r.upperBound...].prefix { $0 != "\"" }) ?? -1
        }
        let body = rest[tagEnd...].dropFirst().prefix { $0 != "<" }
        return Measure(texts: attribute("data-texts"), overlaps: attribute("data-overlaps"), clipped: attribute("data-clipped"),
                       details: body.replacingOccurrences(of: "&quot;", with: "\""))
    }
}
