import BLEReplay
import Foundation
import Testing

/// RootCanal, a second and independent controller implementation, replays the controller-level
/// session recorded on Bumble (`Golden.setup`: reset, buffer sizes, version, legacy advertising
/// and scanning on/off): the same answers under the default rules; with `--strict
/// controller-info` the differences are the controller's identity and capabilities, nothing else.
@Suite(.enabled(if: ReplayEnvironment.rootCanal != nil && Golden.setupStarted), .liveThreads, .timeLimit(.minutes(1)))
struct RootCanalReplayTests {
    @Test func bumbleRecordingReplaysOnRootCanal() async throws {
        let setup = try await Golden.setup()
        let rootCanal = try await RootCanal(binary: try #require(ReplayEnvironment.rootCanal))
        let result = try await CLIRun.run(["replay", setup.path, "--hci", rootCanal.uri, "--timeout", "3", "--json"])
        #expect(result.status == 0, "\(result.stdout.prefix(3000))")
        #expect(try result.divergences().isEmpty)

        let strict = try await CLIRun.run(["replay", setup.path, "--hci", rootCanal.uri, "--timeout", "3", "--json", "--strict", "controller-info", "--strict", "environment"])
        #expect(strict.status == 1)
        let divergences = try strict.divergences()
        let summaries = divergences.map { ($0["expected"] as? [String: Any])?["summary"] as? String ?? "" }
        #expect(summaries.contains("HCI Event: Command Complete (0x0e) for Read Local Version Information"))
        #expect(divergences.allSatisfy { $0["kind"] as? String == "mismatch" })
        let rules = divergences.flatMap { ($0["differences"] as? [[String: Any]] ?? []).map { $0["rule"] as? String } }
        #expect(rules.allSatisfy { $0 == "controller-info" }, "\(rules)")
        #expect(divergences.allSatisfy { $0["class"] as? String == "environment" })
    }
}
