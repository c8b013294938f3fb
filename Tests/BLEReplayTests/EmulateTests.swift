import BLEReplay
import Foundation
import Testing

/// `bleanalyze emulate` plays the recorded controller to Bumble's host stack
/// (`scripts/replay/host_against.py`), over TCP and over a pty.
@Suite(.enabled(if: Golden.sessionStarted), .liveThreads, .timeLimit(.minutes(1)))
struct EmulateTests {
    struct Run {
        var emulate: CLIRun.Result
        var host: LiveProcess
        var hostStatus: Int32
    }

    static func emulate(_ recording: URL, listen: String, hostTransport: (String) -> String, scenario: String = "session") async throws -> Run {
        let start = Date()
        let emulator = try LiveProcess("bleanalyze emulate", executable: ReplayEnvironment.binary,
                                       arguments: ["emulate", recording.path, "--listen", listen, "--timeout", "3", "--accept-timeout", "90", "--json"])
        let line = try await emulator.line(startingWith: "listening on ", timeout: 10)
        let address = String(line.dropFirst("listening on ".count))
        let host = try LiveProcess("host_against", executable: ReplayEnvironment.python, arguments: [
            ReplayEnvironment.script("host_against.py"), "--transport", hostTransport(address), "--scenario", scenario,
        ])
        // The host is a Bumble script: ~4 s to start alone, over 20 s while a test run starts several at once on 2 cores.
        let hostStatus = try await host.wait(timeout: 150)
        let status = try await emulator.wait(timeout: 30)
        return Run(emulate: CLIRun.Result(status: status, stdout: emulator.stdout, stderr: emulator.stderr,
                                          seconds: Date().timeIntervalSince(start)), host: host, hostStatus: hostStatus)
    }

    /// What the host read, from its `RESULT {json}` line.
    static func answers(_ host: LiveProcess) throws -> [String: Any] {
        let line = try #require(host.stdout.split(separator: "\n").first { $0.hasPrefix("RESULT ") })
        return try #require(try JSONSerialization.jsonObject(with: Data(line.dropFirst("RESULT ".count).utf8)) as? [String: Any])
    }

    static func checkRecordedAnswers(_ run: Run) throws {
        #expect(run.hostStatus == 0, "\(run.host.stdout.suffix(1000)) \(run.host.stderr.suffix(1500))")
        #expect(run.emulate.status == 0, "\(run.emulate.stdout.prefix(3000))")
        #expect(try run.emulate.divergences().isEmpty)
        let json = try run.emulate.json()
        #expect(json["replayed"] as? Int == json["total"] as? Int)
        let answers = try answers(run.host)
        #expect(answers["golden"] as? String == "676f6c64656e")   // "golden"
        #expect(answers["battery"] as? String == "64")
        #expect(answers["notified"] as? String == "63")
        #expect(answers["mtu"] as? Int == 128)
    }

    @Test func overTCP() async throws {
        let run = try await Self.emulate(try await Golden.session(), listen: "tcp:127.0.0.1:0") { address in
            "tcp-client:" + address.dropFirst("tcp:".count)
        }
        try Self.checkRecordedAnswers(run)
    }

    @Test func overPTY() async throws {
        let link = try ReplayEnvironment.temporaryDirectory("emulate-pty").appendingPathComponent("hci").path
        let run = try await Self.emulate(try await Golden.session(), listen: "pty:\(link)") { address in
            #expect(address.hasPrefix("pty:/dev/pts/"))
            return "serial:\(link)"
        }
        try Self.checkRecordedAnswers(run)
        #expect(!FileManager.default.fileExists(atPath: link))
    }

    /// A host that does something else (advertises instead of scanning) is reported where it
    /// leaves the recording, and still gets an answer to the command the recording lacks.
    @Test func hostThatDivergesIsReported() async throws {
        let run = try await Self.emulate(try await Golden.session(), listen: "tcp:127.0.0.1:0", hostTransport: { "tcp-client:" + $0.dropFirst("tcp:".count) },
                                   scenario: "setup")
        #expect(run.emulate.status == 1)
        let divergences = try run.emulate.divergences()
        let unexpected = divergences.filter { $0["kind"] as? String == "unexpected" }
        #expect(!unexpected.isEmpty, "\(run.emulate.stdout.prefix(2000))")
        #expect(unexpected.allSatisfy { $0["direction"] as? String == "host-to-controller" })
        let summary = (unexpected.first?["actual"] as? [String: Any])?["summary"] as? String ?? ""
        #expect(summary.contains("Advertising"))
        #expect(divergences.contains { $0["kind"] as? String == "ended-early" || $0["kind"] as? String == "missing" })
    }
}
