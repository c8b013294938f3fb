import BLECapture
import TestSupport
import Foundation
import Testing

/// The HTML report (`report FILE -o OUT.html`), the report's output options, the committed
/// Reports/ (byte-for-byte current) and the pages in a real browser (headless Chromium).
@Suite struct HTMLReportTests {
    /// Runs the binary in the repository root (so paths in reports are `captures/…` as `make reports` writes them).
    static func runInRepo(_ arguments: [String], environment: [String: String] = [:]) throws -> CLI.Result {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CLI.binary)
        p.arguments = arguments
        p.currentDirectoryURL = CLI.repoRoot
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        p.environment = env
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return CLI.Result(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
    }

    static func temporaryDirectory(_ name: String) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bleanalyze-\(name)-\(getpid())")
        try? FileManager.default.removeItem(at: dir)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// The captures `make reports` renders (scripts/reports/render.sh).
    static func reportCaptures() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: CLI.repoRoot.appendingPathComponent("captures").path)
            .filter { name in [".btsnoop", ".pcap", ".pcapng", ".gz"].contains { name.hasSuffix($0) } }.sorted()
    }

    /// The HTML report of a capture (path relative to the repository root), via a temporary file.
    static func html(_ capture: String) throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("bleanalyze-page-\(getpid())-\(UInt32.random(in: 0 ... .max)).html")
        defer { try? FileManager.default.removeItem(at: file) }
        let r = try runInRepo(["report", capture, "-o", file.path])
        #expect(r.status == 0, "\(capture): \(r.stderr)")
        return (try? String(contentsOf: file, encoding: .utf8)) ?? ""
    }

    static func laneCount(_ html: String) -> Int { html.components(separatedBy: "class=\"lane ").count - 1 }

    /// Lanes the timeline should have for a report's JSON: the radio lane and one per peer (adapter
    /// and address; a connection with no known peer alone), at most 60.
    static func expectedLanes(_ report: [String: Any]) -> Int {
        let connections = report["connections"] as? [[String: Any]] ?? []
        let peers = Set(connections.map { c in
            (c["peer"] as? String).map { "\(c["adapter"] as? Int ?? 0)/\($0)" } ?? "conn/\(c["index"] as? Int ?? 0)"
        })
        return min(peers.count, 60) + 1
    }

    @Test func htmlForEveryCaptureIsSelfContained() throws {
        let dir = try Self.temporaryDirectory("html")
        defer { try? FileManager.default.removeItem(at: dir) }
        for path in try CLI.allCaptures() {
            let out = dir.appendingPathComponent(URL(fileURLWithPath: path).lastPathComponent + ".html").path
            let r = try CLI.run(["report", path, "-o", out])
            #expect(r.status == 0, "\(path): \(r.stderr)")
            #expect(r.stdout.isEmpty, "-o writes the file, not stdout")
            let html = try String(contentsOfFile: out, encoding: .utf8)
            #expect(html.hasPrefix("<!DOCTYPE html>"))
            #expect(html.hasSuffix("</html>\n"))
            // No network: nothing is loaded from elsewhere, and the page forbids it.
            for banned in ["<link", " src=", "@import", "url(http", "<iframe", "<object", "<embed"] {
                #expect(!html.contains(banned), "\(path): \(banned)")
            }
            #expect(html.contains("default-src 'none'"))
            let lanes = Self.expectedLanes(try CLI.json(try CLI.run([path, "--json"]).stdout))
            #expect(Self.laneCount(html) == lanes, "\(path): one lane per peer plus the radio lane")
        }
    }

    @Test func htmlIsDeterministicAndShowsTheEvidence() throws {
        let a = try Self.html("captures/flow_stall.btsnoop")
        let b = try Self.html("captures/flow_stall.btsnoop")
        #expect(a == b)
        #expect(!a.isEmpty)
        // The finding links to its decoded evidence frames, which are in the page.
        #expect(a.contains("id=\"finding-1\""))
        #expect(a.contains("href=\"#f63\""))
        #expect(a.contains("<pre id=\"f63\" class=\"frame evidence\">"))
        #expect(a.contains("Number of Completed Packets"))
        #expect(a.contains("Host stalled after credits came back"))
        // Findings grouped by rule: one head row per rule, with its count; the filter box.
        let json = try CLI.json(try CLI.run([CLI.capture("flow_stall.btsnoop"), "--json"]).stdout)
        let rules = (json["findings"] as? [[String: Any]] ?? []).compactMap { $0["rule"] as? String }
        #expect(a.components(separatedBy: "<tr class=\"rule-head").count - 1 == Set(rules).count)
        #expect(a.components(separatedBy: "<tr id=\"finding-").count - 1 == rules.count)
        #expect(a.contains("id=\"finding-filter\""))
        // The MTU picture: the value byte by byte against the limit.
        let mtu = try Self.html("captures/mtu_truncated_read.btsnoop")
        #expect(mtu.contains("class=\"mtu-limit\""))
        #expect(mtu.contains("limit: 22 bytes"))
    }

    @Test func outputFormatFollowsTheExtension() throws {
        let dir = try Self.temporaryDirectory("formats")
        defer { try? FileManager.default.removeItem(at: dir) }
        let capture = CLI.capture("healthy.btsnoop")
        let text = try CLI.run([capture]).stdout
        #expect(try CLI.run([capture, "-o", dir.appendingPathComponent("r.txt").path]).status == 0)
        #expect(try String(contentsOf: dir.appendingPathComponent("r.txt"), encoding: .utf8) == text)
        #expect(try CLI.run(["report", capture, "--output", dir.appendingPathComponent("r.json").path]).status == 0)
        let json = try CLI.json(try String(contentsOf: dir.appendingPathComponent("r.json"), encoding: .utf8))
        #expect(json["schemaVersion"] as? Int == 1)
        // --html writes the page and still prints the text report.
        let both = try CLI.run([capture, "--html", dir.appendingPathComponent("r.html").path])
        #expect(both.status == 0)
        #expect(both.stdout == text)
        #expect(try String(contentsOf: dir.appendingPathComponent("r.html"), encoding: .utf8).hasPrefix("<!DOCTYPE html>"))
        #expect(try CLI.run([capture, "-o", "/nonexistent-dir/r.html"]).status == 2)
        #expect(try CLI.run([capture, "--color", "sometimes"]).status == 2)
    }

    @Test func textReportColourOnlyWhenAsked() throws {
        let capture = CLI.capture("flow_stall.btsnoop")
        let piped = try CLI.run([capture])
        #expect(!piped.stdout.contains("\u{1B}["), "no colour when stdout is a pipe")
        let forced = try CLI.run([capture, "--color", "always"])
        #expect(forced.stdout.contains("\u{1B}[1;33mWARNING\u{1B}[0m"))
        #expect(forced.stdout.replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression) == piped.stdout)
        // The summary a person reads first.
        for line in ["  Capture      ", "  Devices      ", "  Connections  ", "  Findings     0 errors, 1 warning, 2 info"] {
            #expect(piped.stdout.contains(line), "\(line)")
        }
        for line in piped.stdout.split(separator: "\n") { #expect(line.count <= 100, "\(line)") }
    }

    /// Device names are attacker-controlled: markup and terminal escapes in them must stay text.
    @Test func hostileDeviceNamesAreEscaped() throws {
        var b = CaptureBuilder(start: 1_700_000_000_000_000)
        let names: [[UInt8]] = [Array("<script>alert(1)</script>".utf8), Array("\"><img src=x onerror=1>".utf8),
                                [0x1B] + Array("[31mred\u{202E}evil".utf8)]
        for (i, n) in names.enumerated() {
            // ADV_IND from the public address 66:55:44:33:22:0i with a Complete Local Name.
            b.advertisingReport(i == 0 ? 0 : 100_000, address: [UInt8(i + 1), 0x22, 0x33, 0x44, 0x55, 0x66], addressType: 0x00,
                                [UInt8(n.count + 1), 0x09] + n)
        }
        let capture = try CLI.temporaryFile("hostile.btsnoop", b.bytes)
        let html = try Self.html(capture)
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(!html.contains("<script>alert"))
        #expect(!html.contains("<img"))
        #expect(!html.contains("\u{1B}"))
        #expect(!html.contains("\u{202E}"))
        #expect(html.components(separatedBy: "<script>").count == 3, "only the report's own two scripts")
        let adv = try CLI.run(["adv", capture])
        #expect(adv.stdout.contains("<script>alert(1)</script>"), "the names are there (as text)")
        let text = try CLI.run([capture, "--color", "always"])
        #expect(!text.stdout.contains("\u{1B}[31mred"), "captured escape sequences never reach the terminal")
    }

    /// Reports/ is committed so a visitor sees the output without installing anything; it must be
    /// what the current binary writes (`make reports` regenerates it).
    @Test func committedReportsAreCurrent() throws {
        let reports = CLI.repoRoot.appendingPathComponent("Reports")
        let dir = try Self.temporaryDirectory("reports")
        defer { try? FileManager.default.removeItem(at: dir) }
        for name in try Self.reportCaptures() {
            for ext in ["html", "txt"] {
                let fresh = dir.appendingPathComponent("\(name).\(ext)")
                let r = try Self.runInRepo(["report", "captures/\(name)", "-o", fresh.path])
                #expect(r.status == 0, "\(name): \(r.stderr)")
                let committed = reports.appendingPathComponent("\(name).\(ext)")
                guard let old = FileManager.default.contents(atPath: committed.path) else {
                    Issue.record("Reports/\(name).\(ext) is missing: run `make reports` and commit Reports/")
                    continue
                }
                #expect(old == FileManager.default.contents(atPath: fresh.path),
                        "Reports/\(name).\(ext) is stale: run `make reports` and commit Reports/")
            }
        }
        let readme = try String(contentsOf: CLI.repoRoot.appendingPathComponent("README.md"), encoding: .utf8)
        for shot in ["pool_full", "idle_connection", "flow_stall", "cccd_insufficient_encryption", "mtu_truncated_read"] {
            let png = "Reports/screenshots/\(shot).png"
            #expect(FileManager.default.fileExists(atPath: CLI.repoRoot.appendingPathComponent(png).path), "\(png) missing")
            #expect(readme.contains(png), "README references \(png)")
        }
    }

    /// Reports/real/ holds the page of every capture of the shared corpus (`make reports` renders
    /// them when ../shared is beside the repository); they must be current too: 13 of them were a
    /// release of rules behind before this check. A page names its capture by the path it was given,
    /// so they are rendered as `make reports` does, from `../shared/captures/real/` beside the repository.
    static let realBeside = Repo.sharedReal?.standardizedFileURL.path
        == CLI.repoRoot.deletingLastPathComponent().appendingPathComponent("shared/captures/real").standardizedFileURL.path

    @Test(.enabled(if: realBeside, "../shared/captures/real is absent (or BLEANALYZE_SHARED_REAL points elsewhere)"))
    func committedRealReportsAreCurrent() throws {
        let reports = CLI.repoRoot.appendingPathComponent("Reports/real")
        let dir = try Self.temporaryDirectory("real-reports")
        defer { try? FileManager.default.removeItem(at: dir) }
        let captures = Repo.realCaptures()
        #expect(!captures.isEmpty)
        for path in captures {
            let name = URL(fileURLWithPath: path).lastPathComponent
            let fresh = dir.appendingPathComponent("\(name).html")
            let r = try Self.runInRepo(["report", "../shared/captures/real/\(name)", "-o", fresh.path])
            #expect(r.status == 0, "\(name): \(r.stderr)")
            guard let old = FileManager.default.contents(atPath: reports.appendingPathComponent("\(name).html").path) else {
                Issue.record("Reports/real/\(name).html is missing: run `make reports` beside ../shared and commit Reports/")
                continue
            }
            #expect(old == FileManager.default.contents(atPath: fresh.path),
                    "Reports/real/\(name).html is stale: run `make reports` beside ../shared and commit Reports/")
        }
    }

    static let chromium: String? = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Each page in headless Chromium: the script ran (data-ready), no error was recorded
    /// (data-errors) and the timeline has one lane per peer plus the radio lane.
    @Test(.enabled(if: browser, "chromium or python3 not installed (apt-get install chromium)"))
    func pagesWorkInABrowser() throws {
        let chromium = try #require(Self.chromium)
        let dir = try Self.temporaryDirectory("browser")
        defer { try? FileManager.default.removeItem(at: dir) }
        let names = try Self.reportCaptures()
        var pages: [(String, URL, Int)] = []
        for name in names {
            let page = dir.appendingPathComponent(name + ".html")
            #expect(try Self.runInRepo(["report", "captures/\(name)", "-o", page.path]).status == 0)
            pages.append((name, page, Self.expectedLanes(try CLI.json(try Self.runInRepo(["captures/\(name)", "--json"]).stdout))))
        }
        let doms = Self.dumpDOMs(chromium, pages.map(\.1), profile: dir.appendingPathComponent("profile").path)
        for (i, (name, _, lanes)) in pages.enumerated() {
            let dom = doms[i]
            #expect(dom.contains("data-ready=\"1\""), "\(name): the page script did not finish")
            #expect(!dom.contains(" data-errors=\""), "\(name): script errors")
            #expect(Self.laneCount(dom) == lanes, "\(name): expected \(lanes) lanes")
        }
    }

    /// Headless Chromium and python3 (which drives it: scripts/reports/dump_doms.py).
    static var browser: Bool { chromium != nil && Tool.available("python3", ["--version"]) }

    /// Each page's DOM after its scripts ran (with a virtual time budget of 2 s, as `--dump-dom
    /// --virtual-time-budget=2000`), "" for a page that could not be read. One Chromium serves every
    /// page, a tab each (scripts/reports/dump_doms.py): starting it per page cost ~0.5 s of CPU a
    /// page, most of these tests' time. `window` ("1400,1000") sets the viewport's size.
    static func dumpDOMs(_ chromium: String, _ pages: [URL], profile: String, window: String? = nil) -> [String] {
        let script = CLI.repoRoot.appendingPathComponent("scripts/reports/dump_doms.py").path
        let arguments = ["python3", script, chromium, profile] + (window.map { ["--window-size", $0] } ?? []) + pages.map(\.path)
        let run = try? Tool.outcome(URL(fileURLWithPath: "/usr/bin/env"), arguments)
        #expect(run?.status == 0, "dump_doms.py: \(run?.output.suffix(2000) ?? "did not start")")
        return pages.map { (try? String(contentsOfFile: $0.path + ".dom", encoding: .utf8)) ?? "" }
    }
}
