import BLECapture
import Foundation
import Testing

/// Every input a fuzzer ever crashed on (`Tests/Fixtures/fuzz-regressions/HARNESS/`) is replayed
/// through the same harness functions by the `Fuzz` runner (a separate process, so a regression
/// is one failed test, not a dead test runner), and every capture-shaped one through
/// `bleanalyze info`, which must exit 0 or 2 — never by a signal.
@Suite struct FuzzRegressionTests {
    static let harnesses = ["capture", "hci", "l2cap", "pipeline"]

    /// (harness, vector path) for every regression vector.
    static let vectors: [(String, String)] = harnesses.flatMap { h -> [(String, String)] in
        let dir = Fixtures.regressions.appendingPathComponent(h)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.filter { !$0.hasPrefix(".") && !$0.hasSuffix(".md") }.sorted().map { (h, dir.appendingPathComponent($0).path) }
    }

    @Test(arguments: vectors)
    func replaysThroughItsHarness(harness: String, path: String) throws {
        let result = try Fixtures.run(Fixtures.binary("Fuzz"), [harness, path])
        #expect(!result.signaled && result.status == 0,
                "\(harness) \(URL(fileURLWithPath: path).lastPathComponent): exit \(result.status)\(result.signaled ? " (signal)" : "")\n\(result.stderr.suffix(2000))")
    }

    /// The harnesses on every project capture (seed encodings made by the runner itself).
    @Test(arguments: harnesses)
    func capturesAsSeeds(harness: String) throws {
        let dir = Fixtures.temporary("seeds-\(harness)")
        let seed = try Fixtures.run(Fixtures.binary("Fuzz"), ["seed", harness, dir] + Fixtures.projectCaptures)
        #expect(seed.status == 0, "\(seed.stderr)")
        let result = try Fixtures.run(Fixtures.binary("Fuzz"), [harness, dir])
        #expect(!result.signaled && result.status == 0, "\(harness): \(result.stderr.suffix(2000))")
    }

    /// `bleanalyze info` on every capture-harness vector: 0 (read) or 2 (not a capture), never a signal.
    @Test func infoNeverDiesOnAVector() throws {
        for (h, path) in Self.vectors where h == "capture" {
            let result = try Fixtures.run(Fixtures.binary("bleanalyze"), ["info", path])
            #expect(!result.signaled && (result.status == 0 || result.status == 2),
                    "\(path): exit \(result.status)\(result.signaled ? " (signal)" : "")\n\(result.stderr.suffix(1000))")
        }
    }
}
