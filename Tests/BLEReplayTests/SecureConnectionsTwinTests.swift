@testable import BLEReplay
import Foundation
import Testing
import TestSupport

/// A twin of a device that paired with LE Secure Connections, on RootCanal: a Bumble central
/// (`scripts/replay/twin_central.py --pair`, Just Works, SC) pairs with it, which needs the twin's
/// P-256 public key, confirm (f4), DHKey check (f6, checked by Bumble) and LTK (f5, the key the
/// controllers encrypt with) all right. The recording's pairing is read with tshark.
@Suite(.enabled(if: ReplayEnvironment.hasBumble && ReplayEnvironment.rootCanal != nil && TsharkATT.available
                && SecureConnectionsSupport.available),
       .liveThreads, .timeLimit(.minutes(3)))
struct SecureConnectionsTwinTests {
    static let recording = Repo.capture("pairing_ok.btsnoop")

    @Test func bumbleCentralPairsWithASecureConnectionsTwinAndTheLinkIsEncrypted() async throws {
        // The recorded Pairing Response (from the device: direction 0x01) asks for Secure Connections
        // and bonding, with no MITM: Just Works.
        let response = TsharkATT.rows(Self.recording, "btsmp.opcode == 0x02", ["btsmp.sc_flag", "btsmp.mitm_flag", "btsmp.io_capability"])
        try #require(response.count == 1)
        #expect(["1", "True"].contains(response[0][0]), "the recording paired with Secure Connections: \(response)")
        #expect(["0", "False"].contains(response[0][1]))

        let dir = try ReplayEnvironment.temporaryDirectory("sc-twin")
        let live = dir.appendingPathComponent("twin.btsnoop").path
        let rootCanal = try await RootCanal(binary: try #require(ReplayEnvironment.rootCanal))
        let (twin, address) = try await TwinTests.startTwin(Self.recording, on: rootCanal, extra: ["-w", live])
        let result = try await TwinTests.central(rootCanal, address: address, arguments: ["--pair"])
        #expect(result["paired"] as? String == "ok", "\(result["paired"] ?? "")")
        #expect(result["encrypted"] as? Bool == true)
        _ = try await twin.wait(timeout: 20)
        #expect(twin.stdout.contains("pairing: LE Secure Connections Just Works"), "\(twin.stdout.prefix(1500))")
        #expect(twin.stdout.contains("encryption: with the LTK of the central's LE Secure Connections pairing (f5)"), "\(twin.stdout.prefix(1500))")

        // The twin's own HCI traffic, decoded by tshark: its Public Key and DHKey Check went out
        // (direction 0x00: host to controller), the controller was given a key, and the link was
        // encrypted (Encryption Change, status 0, encryption on).
        let sent = TsharkATT.rows(live, "btsmp && hci_h4.direction == 0x00", ["btsmp.opcode"]).compactMap(\.first)
        #expect(sent.contains("0x0c") && sent.contains("0x0d") && sent.contains("0x03") && sent.contains("0x04"), "\(sent)")
        // RootCanal encrypts with whatever keys it is given: the LTK the twin gave its controller
        // (LE Long Term Key Request Reply) must be the one Bumble derived with its own f5.
        let reply = TsharkATT.rows(live, "bthci_cmd.opcode == 0x201a", ["bthci_cmd.le_long_term_key"]).compactMap(\.first)
        let centralLTK = try #require(result["ltk"] as? String, "Bumble reported no LTK")
        // tshark's byte order for the key is not Bumble's wire order: either order matches.
        let twinLTK = reply.first ?? "", reversed = stride(from: 0, to: twinLTK.count, by: 2).map {
            String(twinLTK.dropFirst($0).prefix(2)) }.reversed().joined()
        #expect(reply.count == 1 && centralLTK.count == 32 && (twinLTK == centralLTK || reversed == centralLTK),
                "twin's LTK \(reply), Bumble's \(centralLTK)")
        let change = TsharkATT.rows(live, "bthci_evt.code == 0x08", ["bthci_evt.status", "bthci_evt.encryption_enable"])
        #expect(change.contains { $0.count == 2 && $0[0] == "0x00" && ["1", "0x01", "True"].contains($0[1]) }, "\(change)")
        // The device's recorded identity keys (IdKey in its Pairing Response) went out after encryption.
        #expect(sent.contains("0x08") && sent.contains("0x09"), "\(sent)")
    }

    /// The recording replayed against its own twin: the replayed central sends the recorded Public
    /// Key, whose private key the recording does not have, so the twin answers the rest of the
    /// pairing as recorded and the controller gets the recorded LTK; every SMP PDU is answered.
    @Test func hermeticReplayOfAnSCPairingAgainstItsTwinAnswersEverySMPPDU() async throws {
        let rootCanal = try await RootCanal(binary: try #require(ReplayEnvironment.rootCanal))
        let result = try await CLIRun.run(["replay", Self.recording, "--hci", rootCanal.uri, "--peer", rootCanal.uri, "--timeout", "3", "--json"],
                                          timeout: 120)
        let json = try result.json()
        let divergences = try result.divergences()
        let smp = divergences.filter { d in
            ["expected", "actual"].contains { ((d[$0] as? [String: Any])?["summary"] as? String ?? "").contains("SMP") }
        }
        #expect(smp.isEmpty, "\(smp.prefix(3))")
        // The count is of ACL packets (the central's 65-byte Public Key took three): tshark counts them.
        let sent = TsharkATT.rows(Self.recording, "bthci_acl && hci_h4.direction == 0x00", ["frame.number"]).count
        let notes = json["notes"] as? [String] ?? []
        #expect(notes.contains("twin: served \(sent)/\(sent) recorded central PDUs, 0 divergences"), "\(notes.prefix(8))")
        #expect(notes.contains { $0.contains("the central sent the recorded Pairing Public Key") }, "\(notes.prefix(8))")
    }
}
