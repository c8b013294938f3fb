import Foundation
import Testing
import TestSupport

/// `peer --device` and `replay --peer … --device` choose the recorded device by address or by name,
/// as every command that selects a connection does (`--conn NAME`, `--peer NAME`). No controller is
/// needed to see the choice: the twin says which device it plays before it opens its transport, and
/// a port nobody listens on then ends the run (exit 2).
@Suite struct PeerDeviceChoiceTests {
    static let capture = CLI.repoRoot.appendingPathComponent("captures/healthy.btsnoop").path
    static let nobody = "tcp:127.0.0.1:9"

    static func playing(_ device: String) throws -> CLI.Result {
        try CLI.run(["peer", capture, "--hci", nobody, "--device", device])
    }

    @Test func aNameChoosesTheDeviceAsItsAddressDoes() throws {
        // The peripheral advertises its name "bleanalyze-hr" (tshark: Complete Local Name in frames
        // 33–35); its address is C0:11:22:33:44:02. The name matches whole, in any case.
        let byAddress = try Self.playing("C0:11:22:33:44:02")
        let byName = try Self.playing("BLEANALYZE-HR")
        #expect(byAddress.stderr.contains("cannot connect"), "the address was accepted and the transport tried: \(byAddress.stderr)")
        #expect(byName.stderr.contains("peer: playing C0:11:22:33:44:02"), "\(byName.stdout)\(byName.stderr)")
        #expect(byName.stderr.contains("cannot connect"), "the name was accepted and the transport tried: \(byName.stderr)")
    }

    @Test func anUnknownNameIsRefusedWithTheReason() throws {
        let r = try Self.playing("no-such-device")
        #expect(r.status == 2)
        #expect(r.stderr.contains("no LE connection to a peer named no-such-device"), "\(r.stderr)")
        #expect(!r.stderr.contains("peer: playing"))
    }
}
