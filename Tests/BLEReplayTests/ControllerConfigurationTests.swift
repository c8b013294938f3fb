import TestSupport
import Foundation
import Testing

/// Controller configuration a session does not need, on a controller that cannot take it:
/// RootCanal 1.10.0 lists LE Write RF Path Compensation (Core v5.4 Vol 4 Part E 7.8.75) as
/// supported and aborts when it gets one, and refuses Write Default Erroneous Data Reporting
/// (7.3.65) with Unknown HCI Command. A recording with both replays to the end (exit 0): the
/// first is not sent (rule `configuration`), the refusal of the second is the controller's
/// (environment); the commands around them are answered as recorded.
@Suite(.enabled(if: ReplayEnvironment.rootCanal != nil), .liveThreads, .timeLimit(.minutes(1)))
struct ControllerConfigurationTests {
    /// Reset, LE Write RF Path Compensation (TX and RX path compensation 0), Write Default
    /// Erroneous Data Reporting (enabled), Read Local Version Information, LE Set Scan Parameters.
    static func recording() throws -> String {
        var b = CaptureBuilder()
        b.command(0, 0x0C03, [])
        b.commandComplete(2000, 0x0C03, [0x00])
        b.command(1000, 0x204D, [0x00, 0x00, 0x00, 0x00])
        b.commandComplete(2000, 0x204D, [0x00])
        b.command(1000, 0x0C5B, [0x01])
        b.commandComplete(2000, 0x0C5B, [0x00])
        b.command(1000, 0x1001, [])
        b.commandComplete(2000, 0x1001, [0x00, 0x0D, 0x00, 0x00, 0x0D, 0x0F, 0x00, 0x00, 0x00])
        // Passive, 60 ms interval and window, public own address, accept all.
        b.command(1000, 0x200B, [0x00, 0x60, 0x00, 0x60, 0x00, 0x00, 0x00])
        b.commandComplete(2000, 0x200B, [0x00])
        return try b.temporaryFile("unneeded-configuration")
    }

    @Test func configurationTheControllerCannotTakeIsEnvironment() async throws {
        let path = try Self.recording()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let rootCanal = try await RootCanal(binary: try #require(ReplayEnvironment.rootCanal))
        let result = try await CLIRun.run(["replay", path, "--hci", rootCanal.uri, "--timeout", "3", "--json"])
        let json = try result.json()
        #expect(result.status == 0, "\(result.stdout.prefix(3000)) \(result.stderr.suffix(1000))")
        #expect(json["error"] is NSNull)
        let divergences = try result.divergences()
        #expect(divergences.allSatisfy { $0["class"] as? String == "environment" })
        let summaries = divergences.map { ($0["expected"] as? [String: Any])?["summary"] as? String ?? "" }
        // The RF path compensation: not sent (a skipped host command), its answer not compared.
        let rf = divergences.filter { ($0["expected"] as? [String: Any])?["summary"] as? String == "HCI Command: LE Write RF Path Compensation (0x08|0x004d)" }
        #expect(rf.count == 1 && rf.first?["kind"] as? String == "skipped", "\(summaries)")
        #expect((json["notes"] as? [String] ?? []).contains { $0.hasPrefix("not sent: LE Write RF Path Compensation ×1 (#3)") })
        // The erroneous data reporting: refused live (Unknown HCI Command), the controller's.
        let refused = divergences.filter { ($0["expected"] as? [String: Any])?["summary"] as? String == "HCI Event: Command Complete (0x0e) for Write Default Erroneous Data Reporting" }
        #expect(refused.count == 1 && refused.first?["kind"] as? String == "mismatch", "\(summaries)")
        #expect(divergences.count == 2, "\(summaries)")
        // Everything else went through: the commands after them were answered.
        #expect(json["replayed"] as? Int == json["total"] as? Int)
        #expect(json["total"] as? Int == 8)
        #expect(json["notCompared"] as? Int == 2)
    }

    /// The rule is what keeps the run alive: sent anyway (`--strict configuration`), the command
    /// ends the controller, and the run (exit 2).
    @Test func sentAnywayTheControllerGoesAway() async throws {
        let path = try Self.recording()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let rootCanal = try await RootCanal(binary: try #require(ReplayEnvironment.rootCanal))
        let result = try await CLIRun.run(["replay", path, "--hci", rootCanal.uri, "--timeout", "3", "--json", "--strict", "configuration"])
        #expect(result.status == 2, "\(result.stdout.prefix(2000))")
        #expect(try result.json()["error"] as? String != nil)
    }
}
