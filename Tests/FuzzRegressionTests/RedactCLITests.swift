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
        let bad = try Fixtures.run(Fixtures.binary("bleanalyze"), ["export", Fixtures.temporary("missing.pcap"), "-o", Fixtures.temporary("z.pcap")])
        #expect(bad.status == 2)
    }
}
