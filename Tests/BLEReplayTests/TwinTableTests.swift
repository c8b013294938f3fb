import BLEBytes
import BLEProtocol
import BLEReplay
import Foundation
import Testing
import TestSupport

/// The twin's parts without a controller: its attribute table answers every discovery request of
/// real captures exactly as the device did (byte for byte, at the recorded MTU), and the HCI
/// command encoder rebuilds every fixed-layout command the phones sent from its decoded fields.
@Suite struct TwinTableTests {
    /// Each capture with the device whose discovery it shows (nil: the peer with the most ATT traffic).
    static let captures = [("android_horizon_treadmill_notify.btsnoop", nil), ("android_pongbot_prepwrite_indicate.btsnoop", "74:B8:39:DF:CE:4A"),
                           ("android_govee_ledstrip_gatt.btsnoop", nil), ("android_miband2_legacy_pairing_gatt.btsnoop", nil)]
        .compactMap { name, device in Repo.sharedReal.map { $0.appendingPathComponent(name).path + (device.map { "#" + $0 } ?? "") } }
        .filter { FileManager.default.fileExists(atPath: String($0.prefix { $0 != "#" })) }

    @Test(.enabled(if: !TwinTableTests.captures.isEmpty), arguments: TwinTableTests.captures)
    func discoveryAnswersEqualTheRecordedOnes(_ item: String) throws {
        let parts = item.split(separator: "#").map(String.init)
        let twin = try TwinRecording.load(path: parts[0], device: parts.count > 1 ? BDAddr(string: parts[1]) : nil)
        var compared = 0
        for step in twin.story.steps {
            let pdu = step.pdu
            guard pdu.count > 4, pdu[2] == 4, pdu[3] == 0, let recorded = step.answer.first?.pdu, recorded.count > 4 else { continue }
            guard let answer = twin.table.discovery(pdu[4...], mtu: step.mtu) else { continue }
            compared += 1
            #expect(answer == Array(recorded[4...]), "frame #\(step.unit.frame): \(step.unit.title)")
        }
        #expect(compared >= 10, "\(compared) discovery requests")
    }

    @Test(.enabled(if: !TwinTableTests.captures.isEmpty), arguments: TwinTableTests.captures)
    func commandsRebuiltFromTheirDecodedFields(_ item: String) throws {
        let recording = try Recording.load(path: String(item.prefix { $0 != "#" }))
        var rebuilt = 0
        for p in recording.packets where p.packet.type == .command && p.packet.bytes.count >= 3 {
            let bytes = p.packet.bytes
            let opcode = HCIOpcode(rawValue: UInt16(bytes[0]) | UInt16(bytes[1]) << 8)
            // Rows whose every parameter has a fixed width (the others take their wire bytes from the caller).
            guard let row = HCIDecoder.commands[opcode.rawValue], !row.parameters.isEmpty,
                  row.parameters.allSatisfy({ HCICommandEncoding.width($0.spec) != nil }) else { continue }
            let layer = bytes.withUnsafeBytes { raw -> Layer in var r = ByteReader(raw); return HCIDecoder.decode(.command, &r) }
            guard layer.error == nil else { continue }
            // The decoded fields in row order, given back by each parameter's spec key (rows without keys are skipped).
            guard layer.fields.count == row.parameters.count else { continue }
            var values: [ParamKey: HCICommandEncoding.Value] = [:]
            for (param, f) in zip(row.parameters, layer.fields) {
                guard let key = param.key else { continue }
                switch f.value {
                case let .integer(v, _): values[key] = .int(v)
                case let .address(a, _): values[key] = .address(a)
                case let .bytes(b), let .secret(b): values[key] = .bytes(b)
                default: break
                }
            }
            guard row.parameters.allSatisfy({ $0.key.map { values[$0] != nil } ?? false }),
                  let encoded = try? HCICommandEncoding.command(opcode, values) else { continue }
            rebuilt += 1
            #expect(encoded == bytes, "frame #\(p.frame): \(HCIDecoder.commandName(opcode))")
        }
        #expect(rebuilt >= 5, "\(rebuilt) commands rebuilt")
    }

    /// The keys the twin answers encryption with are the recorded LE Enable Encryption parameters
    /// (Core v5.4 Vol 4 Part E 7.8.24) of its connection, as tshark reads them.
    @Test(.enabled(if: Tool.available("tshark", ["-v"]) && !TwinTableTests.captures.isEmpty), arguments: TwinTableTests.captures)
    func recordedKeysAreTheEnableEncryptionParameters(_ item: String) throws {
        let parts = item.split(separator: "#").map(String.init)
        let twin = try TwinRecording.load(path: parts[0], device: parts.count > 1 ? BDAddr(string: parts[1]) : nil)
        let rows = Tool.run("tshark", ["-r", parts[0], "-Y", "bthci_cmd.opcode == 0x2019", "-T", "fields", "-E", "separator=/t",
                                       "-e", "frame.number", "-e", "bthci_cmd.connection_handle", "-e", "bthci_cmd.le_random_number",
                                       "-e", "bthci_cmd.le_encrypted_diversifier", "-e", "bthci_cmd.le_long_term_key"]) ?? ""
        // The connection ends at its handle's next Disconnection Complete or (a capture that missed
        // it) the next connection complete naming the handle.
        let ends = Tool.run("tshark", ["-r", parts[0], "-Y", "bthci_evt.code == 0x05 || bthci_evt.le_meta_subevent == 0x01 || bthci_evt.le_meta_subevent == 0x0a",
                                       "-T", "fields", "-e", "frame.number", "-e", "bthci_evt.connection_handle"]) ?? ""
        var end = Int.max
        for line in ends.split(separator: "\n") {
            let f = line.split(separator: "\t")
            guard f.count == 2, let frame = Int(f[0]), frame > twin.firstFrame, Int(f[1].dropFirst(2), radix: 16) == Int(twin.handle) else { continue }
            end = min(end, frame)
        }
        func hex(_ b: [UInt8]) -> String { b.map { String(format: "%02x", $0) }.joined() }
        var expected: [String] = []
        for line in rows.split(separator: "\n") {
            let f = line.split(separator: "\t").map(String.init)
            guard f.count == 5, let frame = Int(f[0]), Int(f[1].dropFirst(2), radix: 16) == Int(twin.handle),
                  (twin.firstFrame ... end).contains(frame), let ediv = Int(f[3].dropFirst(2), radix: 16) else { continue }
            expected.append("#\(frame) \(f[2]) \(ediv) \(f[4])")
        }
        let got = twin.keys.map { "#\($0.frame) \(hex($0.random)) \($0.ediv) \(hex($0.key))" }
        #expect(got == expected)
        if item.contains("miband") { #expect(!expected.isEmpty, "the twin's connection is encrypted (frame 14160)") }
    }
}
