import BLECapture
import Foundation
import Testing

/// `bleanalyze redact` and `bleanalyze export` as users run them: exit codes and output.
@Suite struct RedactCLITests {
    static let healthy = Fixtures.repoRoot.appendingPathComponent("captures/healthy.btsnoop").path

    @Test func redactWritesTheCopyAndSaysWhatItDid() throws {
        let out = Fixtures.temporary("cli-redacted.btsnoop")
        let r = try Fixtures.run(Fixtures.binary("bleanalyze"), ["redact", Self.healthy, "-o", out])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("wrote \(out): btsnoop, 147 frames"), "\(r.stdout)")
        #expect(r.stdout.contains("addresses: 3 replaced"), "\(r.stdout)")
        #expect(FileManager.default.fileExists(atPath: out))
        let gz = Fixtures.repoRoot.appendingPathComponent("captures/healthy.btsnoop.gz").path
        let r2 = try Fixtures.run(Fixtures.binary("bleanalyze"), ["redact", gz, "-o", Fixtures.temporary("cli-gz.btsnoop"), "--keep-names"])
        #expect(r2.status == 0)
        #expect(r2.stdout.contains("written uncompressed"), "\(r2.stdout)")
        #expect(r2.stdout.contains("kept (--keep-names)"), "\(r2.stdout)")
    }

    /// `--json` prints one object with the counts and every kept string; the text summary says on
    /// stderr what is kept (the app's data in ATT values).
    @Test func redactSaysWhatIsKept() throws {
        let out = Fixtures.temporary("cli-kept.btsnoop")
        let text = try Fixtures.run(Fixtures.binary("bleanalyze"), ["redact", Self.healthy, "-o", out])
        #expect(text.status == 0)
        #expect(text.stderr.contains("keeps the app's own data"), "\(text.stderr)")
        #expect(text.stderr.contains("--drop-values"), "\(text.stderr)")
        let json = try Fixtures.run(Fixtures.binary("bleanalyze"), ["redact", Self.healthy, "-o", out, "--json", "--drop-values"])
        #expect(json.status == 0, "\(json.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let values = object?["attValues"] as? [String: Any]
        #expect((values?["dropped"] as? Int ?? 0) > 0, "\(json.stdout)")
        #expect(object?["keptStrings"] is [Any])
        #expect((object?["frames"] as? Int) == 147)
        #expect(!json.stderr.contains("keeps the app's own data"), "nothing of the app's data is kept: \(json.stderr)")
    }

    @Test func redactRefusesBadInputWithExitTwo() throws {
        let copy = Fixtures.temporary("cli-self.btsnoop")
        try? FileManager.default.removeItem(atPath: copy)
        try FileManager.default.copyItem(atPath: Self.healthy, toPath: copy)
        for args in [["redact", copy, "-o", copy], ["redact", Fixtures.temporary("missing.btsnoop"), "-o", Fixtures.temporary("x")],
                     ["redact", Fixtures.repoRoot.appendingPathComponent("README.md").path, "-o", Fixtures.temporary("y")]] {
            let r = try Fixtures.run(Fixtures.binary("bleanalyze"), args)
            #expect(r.status == 2 && !r.signaled, "\(args): \(r.status) \(r.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == Data(contentsOf: URL(fileURLWithPath: Self.healthy)), "the input is untouched")
        let usage = try Fixtures.run(Fixtures.binary("bleanalyze"), ["redact", Self.healthy])
        #expect(usage.status == 2, "-o is required")
    }

    @Test func exportWritesPcap201() throws {
        let out = Fixtures.temporary("cli-export.pcap")
        let r = try Fixtures.run(Fixtures.binary("bleanalyze"), ["export", Self.healthy, "-o", out])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("link type 201, 147 of 147 frames"), "\(r.stdout)")
        let info = try Fixtures.run(Fixtures.binary("bleanalyze"), ["info", "--json", out])
        #expect(info.status == 0)
        #expect(info.stdout.contains("\"format\":\"pcap\"") || info.stdout.contains("\"format\": \"pcap\""), "\(info.stdout.prefix(300))")
        #expect(!r.stderr.contains("frame numbers"), "every frame written: numbers match")
        let bad = try Fixtures.run(Fixtures.binary("bleanalyze"), ["export", Fixtures.temporary("missing.pcap"), "-o", Fixtures.temporary("z.pcap")])
        #expect(bad.status == 2)
    }

    /// A subset written (log records have no place in link type 201): stderr says the frame numbers
    /// no longer match, and from which input frame (the first non-HCI record comes before it).
    @Test func exportSaysWhenFrameNumbersChange() throws {
        guard let monitor = Fixtures.generatedCaptures.first(where: { $0.hasSuffix("monitor.btsnoop") }) else {
            Issue.record("generated captures missing"); return
        }
        let records = try CaptureFile(path: monitor).records().records
        guard let skipped = records.firstIndex(where: { !$0.kind.isHCI }),
              let next = records[(skipped + 1)...].firstIndex(where: { $0.kind.isHCI }) else { Issue.record("no log record"); return }
        let out = Fixtures.temporary("cli-export-monitor.pcap")
        let r = try Fixtures.run(Fixtures.binary("bleanalyze"), ["export", monitor, "-o", out])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("frame numbers no longer match"), "\(r.stderr)")
        // Frame numbers count from 1: the first HCI packet after the first left-out record.
        #expect(r.stderr.contains("from input frame \(next + 1) on (written as frame \(skipped + 1))"), "\(r.stderr)")
    }
}
