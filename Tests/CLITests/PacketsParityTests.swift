import Foundation
import TestSupport
import Testing

/// `packets` against btmon (BlueZ 5.66, `btmon -r`) where users read both: BlueZ mgmt traffic, log
/// records on one line, vendor names of public addresses. btmon's output is the expected value.
@Suite(.enabled(if: CLI.sharedReal != nil, "../shared/captures/real is absent"),
       .enabled(if: CLI.tool("btmon", ["--version"]), "btmon is not installed"))
struct PacketsParityTests {
    static func real(_ name: String) -> String { CLI.sharedReal!.appendingPathComponent(name).path }

    /// btmon's text; `-p debug` shows user logging of every priority (btmon hides debug by default).
    static func btmon(_ path: String) throws -> [Substring] {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["btmon", "-p", "debug", "-r", path]
        p.environment = ["COLUMNS": "200", "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n")
    }

    static func ours(_ path: String) throws -> [Substring] {
        let r = try CLI.run(["packets", path])
        #expect(r.status == 0)
        return r.stdout.split(separator: "\n")
    }

    /// `@ MGMT Command: Set Powered (0x0005) plen 1`: kind, code and plen of every mgmt record in order,
    /// as btmon prints them (btmon shortens long names with `..`, so names are compared where whole).
    @Test func mgmtTitlesMatchBtmon() throws {
        let path = Self.real("bluez_btmon_mgmt_realtek.btsnoop")
        let pattern = /^@ MGMT (Command|Event): (.+?) \((0x[0-9a-f]{4})\) plen (\d+)/
        func titles(_ lines: [Substring]) -> [(String, String, String, String)] {
            var out: [(String, String, String, String)] = []
            for line in lines {
                guard let m = try? pattern.firstMatch(in: line) else { continue }
                out.append((String(m.1), String(m.2), String(m.3), String(m.4)))
            }
            return out
        }
        let expected = titles(try Self.btmon(path)), actual = titles(try Self.ours(path))
        #expect(expected.count == 81)
        #expect(actual.map { "\($0.0) \($0.2) \($0.3)" } == expected.map { "\($0.0) \($0.2) \($0.3)" })
        for (e, a) in zip(expected, actual) where !e.1.contains("..") {
            #expect(e.1 == a.1, "btmon names \(e.2) \(e.1)")
        }
    }

    /// `@ MGMT Open: bluetoothd (privileged) version 1.22`, and the settings bits of every Command
    /// Complete / New Settings in the same order and value.
    @Test func mgmtOpenAndSettingsMatchBtmon() throws {
        let path = Self.real("bluez_btmon_mgmt_realtek.btsnoop")
        let expected = try Self.btmon(path), actual = try Self.ours(path)
        let opens = expected.filter { $0.hasPrefix("@ MGMT Open: ") }.map { $0.split(separator: "{")[0].trimmingCharacters(in: .whitespaces) }
        #expect(opens.count == 3)
        #expect(actual.filter { $0.hasPrefix("@ MGMT Open: ") }.map { $0.split(separator: "{")[0].trimmingCharacters(in: .whitespaces) } == opens)
        func settings(_ lines: [Substring]) -> [String] {
            lines.filter { $0.lowercased().contains("current settings: 0x") }.map { String($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) }
        }
        #expect(settings(expected).count == 6)
        #expect(settings(actual) == settings(expected))
    }

    /// Index records on one line: `= New Index: E8:48:B8:C8:20:00 (Primary,USB,hci0)`, `= Open Index…`,
    /// `= Index Info: … (Realtek Semiconductor Corporation)` (btmon may shorten the address there).
    @Test func indexRecordsAreOneLineLikeBtmon() throws {
        let path = Self.real("bluez_btmon_mgmt_realtek.btsnoop")
        let expected = try Self.btmon(path), actual = try Self.ours(path)
        func lines(_ all: [Substring], _ prefix: String) -> [String] {
            all.filter { $0.hasPrefix(prefix) }.map { line in
                String(line[..<(line.range(of: "  ")?.lowerBound ?? line.endIndex)])
            }
        }
        #expect(lines(expected, "= New Index: ").count == 1)
        #expect(lines(actual, "= New Index: ") == lines(expected, "= New Index: "))
        #expect(lines(actual, "= Open Index").count == lines(expected, "= Open Index").count)
        #expect(lines(actual, "= Close Index").count == lines(expected, "= Close Index").count)
        let company = { (l: String) in l.split(separator: "(").last.map(String.init) }
        #expect(lines(expected, "= Index Info: ").count == 2)
        #expect(lines(actual, "= Index Info: ").map(company) == lines(expected, "= Index Info: ").map(company))
    }

    /// btmon prints a user-logging record as `= bluetoothd: Terminating`, one line; so do we, in order.
    @Test func userLoggingIsOneLineLikeBtmon() throws {
        let path = Self.real("bluez_btmon_mgmt_realtek.btsnoop")
        /// The message: after the ident, up to the right-hand column (two spaces or more).
        func logs(_ lines: [Substring]) -> [String] {
            lines.filter { $0.hasPrefix("= bluetoothd: ") }.map { line in
                let message = line.dropFirst("= bluetoothd: ".count)
                return String(message[..<(message.range(of: "  ")?.lowerBound ?? message.endIndex)])
            }
        }
        let expected = logs(try Self.btmon(path))
        let actualLines = try Self.ours(path)
        let actual = logs(actualLines)
        #expect(expected.count == 350)
        #expect(actual.count == expected.count)
        for (e, a) in zip(expected, actual) {
            // btmon cuts long lines to its width and ends them with "..".
            if e.hasSuffix("..") {
                var cut = Substring(e)
                while cut.hasSuffix(".") { cut = cut.dropLast() }
                #expect(a.hasPrefix(cut), "\(e) vs \(a)")
            } else {
                #expect(a == e)
            }
        }
        // Nothing of a log record is printed after its line.
        for (i, line) in actualLines.enumerated() where line.hasPrefix("= bluetoothd: ") && i + 1 < actualLines.count {
            #expect("<>=*@".contains(actualLines[i + 1].first ?? " "), "field lines after \(line)")
        }
    }

    /// btmon names the vendor of a public address from its OUI: `Address: 1C:B3:C9:3C:C3:DB (Apple, Inc.)`;
    /// a random one gets its kind, not a vendor.
    @Test func publicAddressVendor() throws {
        let path = Self.real("android_dsp408_spp_a2dp_broadcom_vendor.btsnoop")
        let expected = try Self.btmon(path).filter { $0.contains("Address: 1C:B3:C9:3C:C3:DB") }
        #expect(expected.first?.hasSuffix("(Apple, Inc.)") == true)
        let actual = try Self.ours(path).filter { $0.contains("Address: 1C:B3:C9:3C:C3:DB") }
        #expect(!actual.isEmpty)
        #expect(actual.allSatisfy { $0.hasSuffix("Address: 1C:B3:C9:3C:C3:DB (Apple, Inc.)") })
        // 00:13:EF:A0:09:10 advertises as an LE random address and connects over BR/EDR (public):
        // btmon gives 6 lines `(Non-Resolvable)` and 8 with the vendor.
        let btmonLines = try Self.btmon(path).filter { $0.contains("Address: 00:13:EF:A0:09:10") }
        let ourLines = try Self.ours(path).filter { $0.contains("Address: 00:13:EF:A0:09:10") }
        #expect(ourLines.filter { $0.hasSuffix("(non-resolvable private)") }.count == btmonLines.filter { $0.hasSuffix("(Non-Resolvable)") }.count)
        #expect(ourLines.filter { $0.hasSuffix("(Kingjon Digital Technology Co.,Ltd)") }.count
                == btmonLines.filter { $0.hasSuffix("(Kingjon Digital Technology Co.,Ltd)") }.count)
        #expect(ourLines.count == btmonLines.count)
    }

    /// `--json` keeps the fields and adds `vendor` to a public address.
    @Test func jsonAddsTheVendor() throws {
        let path = Self.real("android_dsp408_spp_a2dp_broadcom_vendor.btsnoop")
        let r = try CLI.run(["packets", path, "--json"])
        let line = try #require(r.stdout.split(separator: "\n").first { $0.contains("\"1C:B3:C9:3C:C3:DB\"") })
        #expect(line.contains("\"value\":\"1C:B3:C9:3C:C3:DB\",\"vendor\":\"Apple, Inc.\"") || line.contains("\"vendor\":\"Apple, Inc.\""))
    }
}

/// Vendor commands named by the maker the controller reported: tshark (Broadcom vendor dissector)
/// is the oracle for the Android captures with a Broadcom controller.
@Suite(.enabled(if: CLI.sharedReal != nil, "../shared/captures/real is absent"),
       .enabled(if: CLI.tool("tshark", ["-v"]), "tshark is not installed"))
struct VendorCommandParityTests {
    @Test(arguments: ["android_dsp408_spp_a2dp_broadcom_vendor.btsnoop", "android_okin_bed_broadcom_vendor.btsnoop"])
    func broadcomVendorCommandsAsTsharkNamesThem(_ name: String) throws {
        let path = PacketsParityTests.real(name)
        let r = try CLI.run(["packets", path])
        // Both report Broadcom (0x000f) in Read Local Version Information.
        #expect(r.stdout.contains("Manufacturer: Broadcom Corporation (0x000f)"))
        var ours: [Int: String] = [:]
        let title = #/^< HCI Command: (.+?) \(0x3f\|0x[0-9a-f]{4}\) plen \d+ +#(\d+) /#
        for line in r.stdout.split(separator: "\n") {
            if let m = try? title.firstMatch(in: line), let frame = Int(m.2) { ours[frame] = String(m.1) }
        }
        let fields = try #require(Tool.run("tshark", ["-r", path, "-Y", "bthci_cmd.opcode >= 0xfc00", "-T", "fields",
                                                      "-e", "frame.number", "-e", "bthci_cmd.opcode", "-e", "_ws.col.Info"]))
        var compared = 0, named = 0
        for line in fields.split(separator: "\n") {
            let parts = line.split(separator: "\t", maxSplits: 2).map(String.init)
            guard parts.count == 3, let frame = Int(parts[0]) else { continue }
            let info = parts[2].replacingOccurrences(of: "[Malformed Packet]", with: "").replacingOccurrences(of: "Sent Broadcom ", with: "")
            let opcode = parts[1].uppercased().replacingOccurrences(of: "0X", with: "0x")
            let expected = info.hasPrefix("Unknown Command") ? "Vendor \(opcode)" : info
            #expect(ours[frame] == expected, "frame \(frame)")
            compared += 1
            if !info.hasPrefix("Unknown Command") { named += 1 }
        }
        #expect(compared == ours.count)
        #expect(named > 100)
    }
}

/// PacketLogger notes: one line per record (`= Note: …`), as many as `--json` has note frames.
@Suite(.enabled(if: CLI.sharedReal != nil, "../shared/captures/real is absent"))
struct LogLineTests {
    @Test func packetLoggerNotesAreOneLineEach() throws {
        let path = PacketsParityTests.real("btstack_packetlogger_govee_btled.pklg")
        let json = try CLI.run(["packets", path, "--json"]).stdout.split(separator: "\n")
        let notes = json.filter { $0.contains("\"type\":\"note\"") }.count
        #expect(notes == 159)
        let text = try CLI.run(["packets", path]).stdout.split(separator: "\n")
        #expect(text.filter { $0.hasPrefix("= Note: ") }.count == notes)
        #expect(text.contains { $0.hasPrefix("= Note: sm.c.4057: sm: generate new ec key ") })
        #expect(!text.contains { $0.hasPrefix("        Text: ") })
    }
}
