import Foundation
import Testing

/// Golden outputs of `timeline` and `gatt` for the Bumble captures, read by a person when recorded.
/// `BLEANALYZE_RECORD=1 swift test --filter GoldenTests` re-records them, and the test then fails so
/// the diff is looked at before it is committed (argument-parser's snapshot rule).
@Suite struct GoldenTests {
    static let captures = ["healthy.btsnoop", "healthy_peripheral.btsnoop", "long_read_write.btsnoop", "pairing_failed.btsnoop",
                           "pairing_ok.btsnoop", "extended_adv.btsnoop", "write_without_response.btsnoop"]

    @Test(arguments: captures.flatMap { c in ["timeline", "gatt", "adv"].map { (c, $0) } })
    func golden(capture: String, command: String) throws {
        let r = try CLI.run([command, CLI.capture(capture)])
        #expect(r.status == 0)
        let golden = CLI.repoRoot.appendingPathComponent("Tests/Golden/\(capture).\(command).txt")
        if ProcessInfo.processInfo.environment["BLEANALYZE_RECORD"] != nil {
            try r.stdout.write(to: golden, atomically: true, encoding: .utf8)
            Issue.record("recorded \(golden.lastPathComponent): read the diff, then run without BLEANALYZE_RECORD")
            return
        }
        let expected = try String(contentsOf: golden, encoding: .utf8)
        #expect(r.stdout == expected, "\(capture) \(command) differs from its golden file")
    }
}
