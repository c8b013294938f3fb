import BLEReplay
import Foundation
import Testing
import TestSupport

/// The shared real captures the twin tests use.
enum TwinCaptures {
    static let horizon = (Repo.sharedReal?.appendingPathComponent("android_horizon_treadmill_notify.btsnoop").path) ?? "/nonexistent"
    static let pongbot = (Repo.sharedReal?.appendingPathComponent("android_pongbot_prepwrite_indicate.btsnoop").path) ?? "/nonexistent"
    static let miband = (Repo.sharedReal?.appendingPathComponent("android_miband2_legacy_pairing_gatt.btsnoop").path) ?? "/nonexistent"
}

/// `bleanalyze peer` (a device twin made from a real Android capture) on RootCanal, checked by a
/// Bumble central (`scripts/replay/twin_central.py`) and by a hermetic `replay --peer`. Expected
/// values come from tshark's decoding of the capture, never from the tool.
@Suite(.enabled(if: ReplayEnvironment.hasBumble && ReplayEnvironment.rootCanal != nil && TsharkATT.available
                && FileManager.default.fileExists(atPath: TwinCaptures.horizon)),
       .liveThreads, .timeLimit(.minutes(4)))
struct TwinTests {
    static let horizon = TwinCaptures.horizon

    /// Starts `bleanalyze peer` on its own RootCanal connection; returns it and the address it advertises.
    static func startTwin(_ file: String, on rootCanal: RootCanal, extra: [String] = []) async throws -> (LiveProcess, String) {
        let twin = try LiveProcess("peer", executable: ReplayEnvironment.binary,
                                   arguments: ["peer", file, "--hci", rootCanal.uri, "--timeout", "90"] + extra)
        let line = try await twin.line(startingWith: "advertising as ", timeout: 20)
        let address = String(line.dropFirst("advertising as ".count).prefix { $0 != " " })
        return (twin, address)
    }

    static func central(_ rootCanal: RootCanal, address: String, arguments: [String]) async throws -> [String: Any] {
        let central = try LiveProcess("twin_central", executable: ReplayEnvironment.python, arguments: [
            ReplayEnvironment.script("twin_central.py"), "--transport", rootCanal.uri.replacingOccurrences(of: "tcp:", with: "tcp-client:"),
            "--address", address,
        ] + arguments)
        let status = try await central.wait(timeout: 120)
        guard status == 0, let line = central.stdout.split(separator: "\n").first(where: { $0.hasPrefix("RESULT ") }),
              let json = try JSONSerialization.jsonObject(with: Data(line.dropFirst("RESULT ".count).utf8)) as? [String: Any] else {
            throw Failure("twin_central.py failed (\(status)): \(central.stdout.suffix(500)) \(central.stderr.suffix(2000))")
        }
        return json
    }

    @Test func bumbleCentralFindsTheRecordedGATTTableAndNotifications() async throws {
        // The oracle: the device's discovery responses (received by the phone: direction 0x01), decoded by tshark.
        let services = TsharkATT.services(Self.horizon, direction: "0x01")
        let characteristics = TsharkATT.characteristics(Self.horizon, direction: "0x01")
        let descriptors = TsharkATT.descriptors(Self.horizon, direction: "0x01", valueHandles: Set(characteristics.map(\.value)))
        try #require(services.count >= 3 && characteristics.count >= 10)
        // The phone's first CCCD write, the write after it, and the notifications recorded in between
        // and until the phone's next write: what the twin must send after the same two writes.
        let pdus = TsharkATT.valuePDUs(Self.horizon)
        let writes = pdus.filter { $0.sent && $0.opcode == 0x12 }
        let cccd = try #require(writes.first { $0.value == "0100" })
        let command = try #require(writes.first { $0.frame > cccd.frame })
        let end = writes.first { $0.frame > command.frame }?.frame ?? Int.max
        let recorded = pdus.filter { !$0.sent && $0.opcode == 0x1b && $0.frame > cccd.frame && $0.frame < end }
        try #require(recorded.count > 10)

        let rootCanal = try await RootCanal(binary: try #require(ReplayEnvironment.rootCanal))
        let (twin, address) = try await Self.startTwin(Self.horizon, on: rootCanal)
        #expect(address == "FA:E4:E3:24:20:09", "the recorded random static address is taken")
        let result = try await Self.central(rootCanal, address: address, arguments: [
            "--write", String(format: "0x%04x=%@", cccd.handle, cccd.value), "--write", String(format: "0x%04x=%@", command.handle, command.value),
            "--notifications", "\(recorded.count)",
        ])

        try Self.expectTable(result, services: services, characteristics: characteristics, descriptors: descriptors)
        #expect((result["writes"] as? [String: String])?.values.allSatisfy { $0 == "ok" } == true, "\(result["writes"] ?? "")")

        let notified = (result["notifications"] as? [[Any]] ?? []).map { "\($0[0] as? Int ?? -1)=\($0[1] as? String ?? "")" }
        #expect(notified == recorded.map { "\($0.handle)=\($0.value)" }, "notifications differ from the recorded ones")

        // The central left after doing a fraction of what the phone did: the twin ends, exit 1.
        let status = try await twin.wait(timeout: 20)
        #expect(status == 1, "\(twin.stdout.suffix(1500))")
        #expect(twin.stdout.contains("not done again by the live central"))
    }

    /// The central's GATT table equals tshark's.
    static func expectTable(_ result: [String: Any], services: Set<TsharkATT.Service>, characteristics: Set<TsharkATT.Characteristic>,
                            descriptors: Set<TsharkATT.Descriptor>) throws {
        let liveServices = Set((result["services"] as? [[String: Any]] ?? []).map {
            TsharkATT.Service(handle: $0["handle"] as? Int ?? -1, end: $0["end"] as? Int ?? -1, uuid: TsharkATT.uuid($0["uuid"] as? String ?? ""))
        })
        let liveCharacteristics = Set((result["characteristics"] as? [[String: Any]] ?? []).map {
            TsharkATT.Characteristic(value: $0["value"] as? Int ?? -1, properties: $0["properties"] as? Int ?? -1, uuid: TsharkATT.uuid($0["uuid"] as? String ?? ""))
        })
        let liveDescriptors = Set((result["descriptors"] as? [[String: Any]] ?? []).map {
            TsharkATT.Descriptor(handle: $0["handle"] as? Int ?? -1, uuid: TsharkATT.uuid($0["uuid"] as? String ?? ""))
        })
        #expect(liveServices == services, "missing \(services.subtracting(liveServices)), extra \(liveServices.subtracting(services))")
        #expect(liveCharacteristics == characteristics,
                "missing \(characteristics.subtracting(liveCharacteristics)), extra \(liveCharacteristics.subtracting(characteristics))")
        #expect(liveDescriptors == descriptors, "missing \(descriptors.subtracting(liveDescriptors)), extra \(liveDescriptors.subtracting(descriptors))")
    }

    /// The pongbot (a public address, MTU 115, indications, prepared writes) among four devices of a
    /// long phone log: picked with --device, it advertises as a random static address and says so,
    /// serves the table tshark decodes from that connection (at the central's MTU 23, not the
    /// recorded 115), and indicates as recorded after the recorded CCCD write.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: TwinCaptures.pongbot)))
    func pongbotTwinChosenByDeviceServesItsTableAndIndicates() async throws {
        let file = TwinCaptures.pongbot
        // tshark's GATT context goes wrong once the handle is reused by later connections: the first one.
        let link = TsharkATT.firstConnection(file, to: "74:b8:39:df:ce:4a", handle: "0x0041")
        let services = TsharkATT.services(file, direction: "0x01", and: link)
        let characteristics = TsharkATT.characteristics(file, direction: "0x01", and: link)
        let descriptors = TsharkATT.descriptors(file, direction: "0x01", valueHandles: Set(characteristics.map(\.value)), and: link)
        try #require(services.count >= 2 && characteristics.count >= 3)
        let pdus = TsharkATT.valuePDUs(file, and: link)
        let cccd = try #require(pdus.first { $0.sent && $0.opcode == 0x12 && $0.value == "0200" })
        let next = pdus.first { $0.sent && $0.frame > cccd.frame }?.frame ?? Int.max
        let indications = pdus.filter { !$0.sent && $0.opcode == 0x1d && $0.frame > cccd.frame && $0.frame < next }
        try #require(!indications.isEmpty)

        let rootCanal = try await RootCanal(binary: try #require(ReplayEnvironment.rootCanal))
        let (twin, address) = try await Self.startTwin(file, on: rootCanal, extra: ["--device", "74:B8:39:DF:CE:4A"])
        #expect(address == "F4:B8:39:DF:CE:4A", "public 74:B8:… becomes random static F4:B8:…")
        let result = try await Self.central(rootCanal, address: address, arguments: [
            "--write", String(format: "0x%04x=%@", cccd.handle, cccd.value), "--notifications", "\(indications.count)",
        ])
        try Self.expectTable(result, services: services, characteristics: characteristics, descriptors: descriptors)
        let indicated = (result["notifications"] as? [[Any]] ?? []).map { "\($0[0] as? Int ?? -1)=\($0[1] as? String ?? "")" }
        #expect(indicated == indications.map { "\($0.handle)=\($0.value)" })
        _ = try await twin.wait(timeout: 30)   // the device has two connections: the twin waits 15 s for the central to come back
        #expect(twin.stdout.contains("the recorded public address 74:B8:39:DF:CE:4A cannot be taken"), "\(twin.stdout.prefix(500))")
    }

    /// The Mi Band 2 paired with LE legacy pairing in its log (tshark: its Pairing Response has no
    /// Secure Connections flag): a Bumble central asking for Just Works pairs with its twin, which
    /// computes the confirm values (c1) and the STK (s1), and distributes the band's recorded keys.
    /// Bumble checks the twin's confirm against its random: a wrong c1 fails the pairing.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: TwinCaptures.miband)))
    func bumbleCentralPairsWithALegacyPairingTwin() async throws {
        let flags = TsharkATT.rows(TwinCaptures.miband, "btsmp.opcode == 0x02", ["btsmp.sc_flag"])
        try #require(flags.first?.first.map { $0 == "0" || $0 == "False" } == true, "the recorded Pairing Response is legacy")
        let rootCanal = try await RootCanal(binary: try #require(ReplayEnvironment.rootCanal))
        let (twin, address) = try await Self.startTwin(TwinCaptures.miband, on: rootCanal)
        let result = try await Self.central(rootCanal, address: address, arguments: ["--pair"])
        #expect(result["paired"] as? String == "ok", "\(result["paired"] ?? "")")
        #expect(result["encrypted"] as? Bool == true)
        _ = try await twin.wait(timeout: 20)
        #expect(twin.stdout.contains("pairing: legacy Just Works"), "\(twin.stdout.prefix(800))")
        #expect(twin.stdout.contains("encryption: with the STK of the central's legacy pairing"))
    }

    @Test func hermeticReplayOfTheAndroidCaptureAgainstItsTwinHasNoATTDivergence() async throws {
        let rootCanal = try await RootCanal(binary: try #require(ReplayEnvironment.rootCanal))
        let result = try await CLIRun.run(["replay", Self.horizon, "--hci", rootCanal.uri, "--peer", rootCanal.uri, "--timeout", "3", "--json"],
                                          timeout: 200)
        #expect(result.status == 1 || result.status == 0, "\(result.stderr.suffix(1500))")
        let json = try result.json()
        let replayed = json["replayed"] as? Int ?? 0, total = json["total"] as? Int ?? 1
        #expect(Double(replayed) >= 0.9 * Double(total), "replayed \(replayed)/\(total)")
        let divergences = try result.divergences()
        let att = divergences.filter { d in
            ["expected", "actual"].contains { ((d[$0] as? [String: Any])?["summary"] as? String ?? "").contains("ATT") }
        }
        #expect(att.isEmpty, "\(att.prefix(3))")
        // The twin answered every L2CAP PDU the phone sent (tshark counts them).
        let sent = TsharkATT.sentL2CAP(Self.horizon)
        let notes = json["notes"] as? [String] ?? []
        #expect(notes.contains("twin: served \(sent)/\(sent) recorded central PDUs, 0 divergences"), "\(notes.prefix(5))")
    }
}
