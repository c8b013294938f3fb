import Foundation
import Testing
import TestSupport

/// The fleet job as it runs: scripts/fleet/test_spark_fleet.py starts a Spark standalone master and two
/// workers on 127.0.0.1, submits scripts/fleet/spark_fleet.py over captures/, the shared real corpus and
/// a damaged file, and compares every Parquet row (read back with pyarrow) with `bleanalyze FILE --json`
/// and hashlib's SHA-256; meanwhile a small local[2] run through a file:// URI. Minutes on two
/// shared cores (the JVMs' start-up dominates), started as the run is planned (below). The binary shipped is BLEANALYZE_FLEET_BIN when set
/// (`make fleet-test`: the static release build), else the one these tests run.
@Suite struct FleetSparkTests {
    static let python = Repo.venv.appendingPathComponent("bin/python")
    static let ready: Bool = FileManager.default.isExecutableFile(atPath: python.path)
        && Tool.available("java", ["-version"])
        && Tool.available(python.path, ["-c", "import pyspark, pyarrow"])

    /// The script, started when Swift Testing evaluates the condition below (while it plans the run,
    /// for selected tests only), so the JVMs work beside the other tests from the first second.
    static let run: StartedRun? = ready ? StartedRun(python, [CLI.repoRoot.appendingPathComponent("scripts/fleet/test_spark_fleet.py").path,
                                                              "--binary", ProcessInfo.processInfo.environment["BLEANALYZE_FLEET_BIN"] ?? CLI.binary]) : nil

    @Test(.enabled(if: run != nil, "needs java 17 and pyspark + pyarrow in .venv (make venv-fleet)"), .timeLimit(.minutes(30)))
    func parquetRowsEqualTheReportOnAStandaloneCluster() async throws {
        let (status, text) = try await #require(Self.run).value()
        let last = text.split(separator: "\n").filter { $0.hasPrefix("fleet: ") }.map(String.init)
        print(last.joined(separator: "\n"))
        #expect(status == 0, "\(text.suffix(4000))")
        #expect(last.last?.hasSuffix(" 0 failed") == true, "\(text.suffix(4000))")
    }
}
