import TestSupport
import Foundation
import Testing

/// The HTML report reads the capture once (issue 14): the evidence windows, series and values come
/// from the analysis pass itself (`EvidenceCollector`), including the windows of findings the
/// detectors add only at the end of the pass.
@Suite struct HTMLOnePassTests {
    /// The HTML report's decoded frames: the numbers of its `<pre id="fN">` blocks.
    static func decodedFrames(_ html: String) -> Set<Int> {
        var numbers = Set<Int>()
        for part in html.components(separatedBy: "<pre id=\"f").dropFirst() {
            if let n = Int(part.prefix { $0.isNumber }) { numbers.insert(n) }
        }
        return numbers
    }

    static var straceRuns: Bool {
        #if os(Linux)
        return CLI.tool("strace", ["-V"])
        #else
        return false
        #endif
    }

    /// strace sees every open(2) of the process: the capture is opened exactly once (the two-pass
    /// report opened it twice).
    @Test(.enabled(if: straceRuns, "strace is not installed (Linux only)"))
    func captureIsOpenedOnce() throws {
        let dir = try HTMLReportTests.temporaryDirectory("one-pass")
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("opens.log").path
        let page = dir.appendingPathComponent("pool_full.html").path
        let capture = CLI.capture("pool_full.btsnoop")
        let traced = try Tool.outcome(URL(fileURLWithPath: "/usr/bin/env"),
                                      ["strace", "-f", "-e", "trace=open,openat", "-o", log, CLI.binary, "report", capture, "-o", page])
        #expect(traced.status == 0, "\(traced.output)")
        let opens = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").filter { $0.contains(capture) }
        #expect(opens.count == 1, "the capture was opened \(opens.count) times:\n\(opens.joined(separator: "\n"))")
        // …and the page still shows the decoded evidence of its findings.
        #expect(!Self.decodedFrames(try String(contentsOfFile: page, encoding: .utf8)).isEmpty)
    }

    /// A capture piped in (read once, never reopened by name) gives the same evidence windows as the file.
    @Test func pipedCaptureHasTheSameEvidence() throws {
        let dir = try HTMLReportTests.temporaryDirectory("one-pass-pipe")
        defer { try? FileManager.default.removeItem(at: dir) }
        let capture = CLI.capture("flow_stall.btsnoop")
        let fromFile = dir.appendingPathComponent("file.html").path, fromPipe = dir.appendingPathComponent("pipe.html").path
        #expect(try CLI.run(["report", capture, "-o", fromFile]).status == 0)
        let piped = try CLI.run(["report", "-", "-o", fromPipe], stdin: .pipe(Data(contentsOf: URL(fileURLWithPath: capture))))
        #expect(piped.status == 0, "\(piped.stderr)")
        let a = Self.decodedFrames(try String(contentsOfFile: fromFile, encoding: .utf8))
        let b = Self.decodedFrames(try String(contentsOfFile: fromPipe, encoding: .utf8))
        #expect(!a.isEmpty)
        #expect(a == b)
    }

    /// Findings the detectors add at the end of the pass cite frames thousands of frames back, long
    /// out of the ring of recent frames: `pool.page-timeouts` (its failed attempts) and
    /// `gatt.subscription-silent` (a CCCD write and its response) in a real Android session. Every
    /// window (±3 frames around each of a finding's first four evidence frames) is decoded.
    @Test(.enabled(if: CLI.sharedReal != nil, "../shared/captures/real is absent"))
    func windowsOfEndOfPassFindings() throws {
        let capture = try #require(CLI.sharedReal).appendingPathComponent("android_pongbot_prepwrite_indicate.btsnoop").path
        let dir = try HTMLReportTests.temporaryDirectory("one-pass-finish")
        defer { try? FileManager.default.removeItem(at: dir) }
        let page = dir.appendingPathComponent("page.html").path
        #expect(try CLI.run(["report", capture, "-o", page, "--around", "3"]).status == 0)
        let shown = Self.decodedFrames(try String(contentsOfFile: page, encoding: .utf8))
        let json = try CLI.json(try CLI.run(["report", capture, "--json"]).stdout)
        let findings = try #require(json["findings"] as? [[String: Any]])
        var checked = 0
        for f in findings where ["pool.page-timeouts", "gatt.subscription-silent"].contains(f["rule"] as? String ?? "") {
            for centre in (f["frames"] as? [Int] ?? []).prefix(4) {
                let window = Set(max(1, centre - 3) ... centre + 3)
                #expect(window.isSubset(of: shown), "\(f["rule"] ?? ""): frames \(window.subtracting(shown).sorted()) of the window around \(centre) missing")
                checked += 1
            }
        }
        // The attempts (from frame 197 on) and subscriptions span thousands of frames: far beyond the ring.
        #expect(checked >= 20)
        #expect(shown.contains(197))
    }
}
