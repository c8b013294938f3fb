import Foundation
import TestSupport
import Testing

/// Causes as users and other tools see them (issue 23): every finding in `--json` has `cause` (null or
/// kind, frames, text), and `export --annotate` puts each finding and its cause on their key frames as
/// pcapng packet comments that tshark, the independent reader, shows in `frame.comment`.
@Suite struct CauseCLITests {
    static let ledble = CLI.sharedReal?.appendingPathComponent("android_ledble_supervision_timeout_reconnect_loop.btsnoop").path

    static func findings(_ path: String) throws -> [[String: Any]] {
        let r = try CLI.run([path, "--json"])
        #expect(r.status == 0 || r.status == 1, "\(r.stderr)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        return try #require(root["findings"] as? [[String: Any]])
    }

    /// Every finding carries the key `cause`; a cause has a known kind, a key frame and a sentence.
    @Test func everyFindingHasCause() throws {
        let kinds: Set<String> = ["peer-reset", "peer-silent", "parameters", "att-timeout", "smp-timeout", "ll-procedure", "mic-failure",
                                  "key-missing", "local-request", "peer-request", "phone-side", "establishment", "link-loss", "pairing",
                                  "controller-refused", "none"]
        var withCause = 0
        for name in ["encryption_failed.btsnoop", "cccd_unanswered.btsnoop", "pairing_failed.btsnoop", "healthy.btsnoop"] {
            for f in try Self.findings(CLI.capture(name)) {
                #expect(f.keys.contains("cause"), "\(name): \(f["rule"] ?? "?") has no cause key")
                guard let cause = f["cause"] as? [String: Any] else { continue }
                withCause += 1
                #expect(kinds.contains(cause["kind"] as? String ?? ""), "\(name): kind \(cause["kind"] ?? "?")")
                #expect(!(cause["frames"] as? [Int] ?? []).isEmpty)
                #expect((cause["text"] as? String ?? "").count > 20)
            }
        }
        #expect(withCause >= 3)
    }

    /// The annotated pcapng opens in tshark with each finding's sentence on its key frame and each
    /// cause on the cause's key frame (frame numbers equal: every record of this btsnoop is HCI).
    @Test(.enabled(if: CLI.tool("tshark", ["-v"]), "tshark is not installed"),
          .enabled(if: ledble.map { FileManager.default.fileExists(atPath: $0) } ?? false, "../shared/captures/real is absent"))
    func annotatedExportShowsFindingsInTshark() throws {
        let input = try #require(Self.ledble)
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("annotated-\(getpid()).pcapng").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let r = try CLI.run(["export", input, "-o", out, "--annotate"])
        #expect(r.status == 0, "\(r.stderr)")
        let text = try #require(Tool.run("tshark", ["-r", out, "-Y", "frame.comment", "-T", "fields", "-e", "frame.number", "-e", "frame.comment"]))
        var comments: [Int: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "\t", maxSplits: 1)
            if parts.count == 2, let n = Int(parts[0]) { comments[n, default: ""] += String(parts[1]) }
        }
        let findings = try Self.findings(input)
        #expect(!findings.isEmpty)
        for f in findings {
            let rule = try #require(f["rule"] as? String), severity = try #require(f["severity"] as? String)
            let key = try #require((f["frames"] as? [Int])?.first)
            #expect(comments[key]?.contains("bleanalyze \(severity.uppercased()) \(rule)") == true, "frame \(key): \(comments[key] ?? "no comment")")
            if let cause = f["cause"] as? [String: Any], let at = (cause["frames"] as? [Int])?.first, let kind = cause["kind"] as? String {
                #expect(comments[at]?.contains(kind) == true, "cause frame \(at): \(comments[at] ?? "no comment")")
            }
        }
        // The packets themselves are the input's: tshark counts as many frames as the input holds.
        let count = try #require(Tool.run("tshark", ["-r", out, "-T", "fields", "-e", "frame.number"])).split(separator: "\n").count
        #expect(count == 1354)
        let pcap = try CLI.run(["export", input, "-o", out.replacingOccurrences(of: ".pcapng", with: ".pcap"), "--annotate"])
        #expect(pcap.status != 0, "--annotate needs a .pcapng output")
    }
}
