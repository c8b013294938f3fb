@testable import BLEReplay
import Foundation
import Testing
import TestSupport

/// A twin (`bleanalyze peer`) with a live Bumble central (`scripts/replay/twin_central.py`) on
/// RootCanal: Passkey Entry (`--passkey N`; Bumble checks every confirm value, so a wrong TK, a
/// wrong round commitment or a wrong DHKey check fails the pairing), what it answers for a handle
/// its recording never had, and a recording's later connections played to a central of its own.
@Suite(.enabled(if: ReplayEnvironment.hasBumble && ReplayEnvironment.rootCanal != nil && TsharkATT.available),
       .liveThreads, .timeLimit(.minutes(4)))
struct TwinLiveCentralTests {
    static let accuChek = Repo.sharedReal?.appendingPathComponent("android_accuchek_glucose_smp_confirm_failed_rebond.btsnoop").path ?? "/nonexistent"
    static let jkbms = Repo.sharedReal?.appendingPathComponent("android_jkbms_long_session_reconnects.btsnoop").path ?? "/nonexistent"

    /// The Accu-Chek meter displays a passkey (its recorded Pairing Response: DisplayOnly, MITM,
    /// legacy): a keyboard central makes it legacy Passkey Entry (Core v5.4 Vol 3 Part H 2.3.5.1),
    /// TK = the passkey. The same passkey pairs and encrypts; another one fails (Confirm Value
    /// Failed from Bumble, which checks the twin's Sconfirm against its Srand and TK).
    @Test(.enabled(if: FileManager.default.fileExists(atPath: accuChek)), arguments: [(123_456, 123_456), (123_456, 654_321)])
    func keyboardCentralPairsWithALegacyPasskeyTwin(twinPasskey: Int, typed: Int) async throws {
        let response = TsharkATT.rows(Self.accuChek, "btsmp.opcode == 0x02", ["btsmp.io_capability", "btsmp.mitm_flag", "btsmp.sc_flag"])
        try #require(response.first.map { ["0x00", "0"].contains($0[0]) && ["1", "True"].contains($0[1]) && ["0", "False"].contains($0[2]) } == true,
                     "the recorded Pairing Response is DisplayOnly, MITM, legacy: \(response)")
        try await Self.pairWithPasskey(Self.accuChek, twinPasskey: twinPasskey, typed: typed, method: "pairing: legacy Passkey Entry",
                                       encrypted: "encryption: with the STK of the central's legacy pairing", refused: "does not fit the passkey")
    }

    /// Starts the twin of `file` with `--passkey twinPasskey`, pairs a Bumble keyboard central that
    /// types `typed`: the same passkey pairs and encrypts, another fails (both sides say so).
    static func pairWithPasskey(_ file: String, twinPasskey: Int, typed: Int, method: String, encrypted: String, refused: String) async throws {
        let rootCanal = try await RootCanal(binary: try #require(ReplayEnvironment.rootCanal))
        let (twin, address) = try await TwinTests.startTwin(file, on: rootCanal, extra: ["--passkey", "\(twinPasskey)"])
        let result = try await TwinTests.central(rootCanal, address: address, arguments: ["--pair", "--passkey", "\(typed)"])
        _ = try await twin.wait(timeout: 30)
        #expect(twin.stdout.contains(method), "\(twin.stdout.prefix(1500))")
        if twinPasskey == typed {
            #expect(result["paired"] as? String == "ok", "\(result["paired"] ?? "")")
            #expect(result["encrypted"] as? Bool == true)
            #expect(twin.stdout.contains(encrypted), "\(twin.stdout.prefix(1500))")
        } else {
            #expect((result["paired"] as? String ?? "ok").hasPrefix("error"), "\(result["paired"] ?? "")")
            #expect(result["encrypted"] as? Bool == false)
            #expect(twin.stdout.contains(refused), "\(twin.stdout.prefix(1500))")
        }
    }

    /// Without `--passkey` the twin cannot do a legacy Passkey Entry pairing (the recording's
    /// passkey is not in it): it refuses as the device did or with Pairing Not Supported, and says why.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: accuChek)))
    func legacyPasskeyTwinWithoutPasskeyRefusesAndSaysWhy() async throws {
        let rootCanal = try await RootCanal(binary: try #require(ReplayEnvironment.rootCanal))
        let (twin, address) = try await TwinTests.startTwin(Self.accuChek, on: rootCanal)
        let result = try await TwinTests.central(rootCanal, address: address, arguments: ["--pair", "--passkey", "123456"])
        _ = try await twin.wait(timeout: 30)
        #expect((result["paired"] as? String ?? "ok").hasPrefix("error"), "\(result["paired"] ?? "")")
        #expect(twin.stdout.contains("give the passkey with --passkey"), "\(twin.stdout.prefix(1500))")
    }

    /// LE Secure Connections Passkey Entry: `pairing_ok.btsnoop` with the device's recorded
    /// Pairing Response made DisplayOnly with MITM (one byte each, in a copy of the recording), so
    /// a keyboard central pairs by Passkey Entry (2.3.5.6.3): 20 rounds of commitments, then the
    /// DHKey checks with r = the passkey. Bumble checks each Cbi against Nbi and its own passkey.
    @Test(.enabled(if: SecureConnectionsSupport.available), arguments: [(20_24_11, 20_24_11), (20_24_11, 11_20_24)])
    func keyboardCentralPairsWithASecureConnectionsPasskeyTwin(twinPasskey: Int, typed: Int) async throws {
        let dir = try ReplayEnvironment.temporaryDirectory("sc-passkey")
        let recording = dir.appendingPathComponent("pairing_display.btsnoop")
        var packets = try RecordingFacts.packets(URL(fileURLWithPath: Repo.capture("pairing_ok.btsnoop")))
        // The device's Pairing Response: ACL from the controller, L2CAP CID 0x0006, code 0x02
        // (Core v5.4 Vol 3 Part H 3.5.2: IO Capability, OOB, AuthReq, ...).
        let k = try #require(packets.firstIndex { p in
            let b = p.packet.bytes
            return !p.fromHost && p.packet.type == .acl && b.count == 4 + 4 + 7 && b[6] == 0x06 && b[7] == 0x00 && b[8] == 0x02
        })
        var bytes = packets[k].packet.bytes
        bytes[9] = 0x00         // IO Capability: DisplayOnly
        bytes[11] |= 0x04       // AuthReq: MITM
        packets[k].packet = H4Packet(.acl, bytes)
        try ReplayEnvironment.writeRecording(packets, to: recording)

        try await Self.pairWithPasskey(recording.path, twinPasskey: twinPasskey, typed: typed, method: "pairing: LE Secure Connections Passkey Entry",
                                       encrypted: "encryption: with the LTK of the central's LE Secure Connections pairing (f5)", refused: "does not fit the passkey")
    }

    /// Requests the recording never had (Core v5.4 Vol 3 Part F 3.4.4.3, 3.4.4.5, 3.4.5.1): a
    /// read and a write of a handle the device's database does not have are answered
    /// Invalid Handle (0x01).
    @Test(.enabled(if: FileManager.default.fileExists(atPath: TwinCaptures.horizon), "../shared/captures/real is absent"))
    func requestsForAHandleTheRecordingNeverHadGetTheSpecsAnswer() async throws {
        let horizon = TwinCaptures.horizon
        // A handle after the device's last service (tshark's decoding of its discovery answers).
        let lastHandle = TsharkATT.services(horizon, direction: "0x01").map(\.end).max() ?? 0
        try #require(lastHandle > 0 && lastHandle < 0xFFF0)
        let unknown = String(format: "0x%04x", Int(lastHandle) + 0x10)
        let rootCanal = try await RootCanal(binary: try #require(ReplayEnvironment.rootCanal))
        let (twin, address) = try await TwinTests.startTwin(horizon, on: rootCanal)
        let result = try await TwinTests.central(rootCanal, address: address, arguments: ["--read", unknown, "--write", "\(unknown)=0102"])
        _ = try await twin.wait(timeout: 20)
        #expect((result["reads"] as? [String: String])?[unknown] == "error:0x01", "\(result["reads"] ?? "")")
        #expect((result["writes"] as? [String: String])?["\(unknown)=0102"] == "error:0x01", "\(result["writes"] ?? "")")
        #expect(twin.stdout.contains("is not in the recorded database: answered Invalid Handle"), "\(twin.stdout.prefix(1500))")
    }

    /// `peer` alone plays every recorded connection of the device: the BMS of
    /// `android_jkbms_long_session_reconnects.btsnoop` was connected six times, each ended by the
    /// phone (tshark: six LE connection completes with it), so after the central's first
    /// disconnection the twin advertises again and serves the same table to its second
    /// connection; then, the central not coming back, it ends.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: jkbms), "../shared/captures/real is absent"))
    func peerAlonePlaysTheRecordingsLaterConnectionsToo() async throws {
        let file = Self.jkbms
        let completes = TsharkATT.rows(file, "bthci_evt.le_meta_subevent == 0x0a && bthci_evt.status == 0x00", ["bthci_evt.bd_addr"])
            + TsharkATT.rows(file, "bthci_evt.le_meta_subevent == 0x01 && bthci_evt.status == 0x00", ["bthci_evt.bd_addr"])
        let count = completes.filter { $0.first?.lowercased() == "c8:47:80:05:73:8c" }.count
        try #require(count == 6, "\(completes)")
        let rootCanal = try await RootCanal(binary: try #require(ReplayEnvironment.rootCanal))
        let (twin, address) = try await TwinTests.startTwin(file, on: rootCanal, extra: ["--device", "C8:47:80:05:73:8C"])
        let first = try await TwinTests.central(rootCanal, address: address, arguments: [])
        let second = try await TwinTests.central(rootCanal, address: address, arguments: [])
        let status = try await twin.wait(timeout: 30)
        let services = { (r: [String: Any]) in ((r["services"] as? [[String: Any]]) ?? []).compactMap { $0["uuid"] as? String } }
        #expect(!services(first).isEmpty && services(first) == services(second), "\(services(first)) \(services(second))")
        #expect(twin.stdout.contains("connection 1 of \(count) ended: advertising again"), "\(twin.stdout.prefix(1500))")
        #expect(twin.stdout.contains("connection 2 of \(count) ended: advertising again"), "\(twin.stdout.prefix(1500))")
        #expect(twin.stdout.contains("the central did not connect again"), "\(twin.stdout.prefix(1500))")
        #expect(status == 1, "the central did not do what the recording's did: \(status)")
    }

    /// The twin requesting security: `pairing_ok.btsnoop` with an SMP Security Request of the
    /// device (Core v5.4 Vol 3 Part H 3.6.7, AuthReq bonding) put before the central's Pairing
    /// Request, in a copy of the recording. The twin sends it when the connection opens, as the
    /// device's opening; a Bumble central that pairs on a Security Request then pairs with it
    /// (Secure Connections, Just Works) and the link is encrypted.
    @Test(.enabled(if: SecureConnectionsSupport.available))
    func twinRequestsSecurityAndTheCentralPairs() async throws {
        let dir = try ReplayEnvironment.temporaryDirectory("security-request")
        let recording = dir.appendingPathComponent("pairing_security_request.btsnoop")
        var packets = try RecordingFacts.packets(URL(fileURLWithPath: Repo.capture("pairing_ok.btsnoop")))
        // The central's first ACL packet: its Pairing Request (L2CAP CID 0x0006, code 0x01).
        let k = try #require(packets.firstIndex { p in
            let b = p.packet.bytes
            return p.fromHost && p.packet.type == .acl && b.count > 8 && b[6] == 0x06 && b[7] == 0x00 && b[8] == 0x01
        })
        let header = packets[k].packet.bytes
        // The same connection handle, first automatically flushable (0b10), L2CAP length 2, CID 6,
        // Security Request (0x0B) with AuthReq bonding (0x01).
        let request = H4Packet(.acl, [header[0], (header[1] & 0x0F) | 0x20, 0x06, 0x00, 0x02, 0x00, 0x06, 0x00, 0x0B, 0x01])
        packets.insert(RecordedPacket(frame: packets[k].frame, timestamp: packets[k].timestamp - 1000, fromHost: false, packet: request), at: k)
        try ReplayEnvironment.writeRecording(packets, to: recording)

        let rootCanal = try await RootCanal(binary: try #require(ReplayEnvironment.rootCanal))
        let (twin, address) = try await TwinTests.startTwin(recording.path, on: rootCanal)
        let result = try await TwinTests.central(rootCanal, address: address, arguments: ["--pair-on-security-request"])
        _ = try await twin.wait(timeout: 30)
        #expect(result["securityRequest"] as? Bool == true, "\(result)")
        #expect(result["paired"] as? String == "ok", "\(result["paired"] ?? "")")
        #expect(result["encrypted"] as? Bool == true)
        #expect(twin.stdout.contains("pairing: LE Secure Connections Just Works"), "\(twin.stdout.prefix(1500))")
    }
}
