import Foundation
import Testing

/// `bleanalyze info`: the JSON interface other tools rely on, and the exit codes.
@Suite struct InfoCommandTests {
    @Test func infoJSONOnEveryCapture() throws {
        for path in try CLI.allCaptures() {
            let r = try CLI.run(["info", path, "--json"])
            #expect(r.status == 0, "\(path): \(r.stderr)")
            let j = try CLI.json(r.stdout)
            #expect(["btsnoop", "pcap", "pcapng", "packetlogger"].contains(j["format"] as? String ?? ""), "\(path)")
            #expect(j["datalink"] is Int)
            #expect(j["frames"] is Int)
            #expect(j["malformed"] is Int)
            #expect(j["truncated"] as? Bool == false)
            #expect(j["att"] is [String: Any])
            // Keys of `att` are lowercase hex opcodes.
            for key in (j["att"] as? [String: Any] ?? [:]).keys {
                #expect(key.hasPrefix("0x") && key.count == 4 && key == key.lowercased(), "\(key)")
            }
        }
    }

    @Test(.enabled(if: CLI.sharedReal != nil, "../shared/captures/real is absent"))

    func realCaptureFacts() throws {
        let dir = try #require(CLI.sharedReal)
        let beewi = try CLI.json(try CLI.run(["info", dir.appendingPathComponent("android_beewi_scan_malformed_adv.btsnoop").path, "--json"]).stdout)
        #expect(beewi["frames"] as? Int == 69)
        #expect(beewi["malformed"] as? Int == 3, "the three truncated manufacturer data structures tshark also flags")
        let pklg = try CLI.json(try CLI.run(["info", dir.appendingPathComponent("macos_packetlogger_bigendian_hci.pklg").path, "--json"]).stdout)
        #expect(pklg["format"] as? String == "packetlogger")
        #expect(pklg["frames"] as? Int == 2239)
        let mon = try CLI.json(try CLI.run(["info", dir.appendingPathComponent("bluez_btmon_mgmt_realtek.btsnoop").path, "--json"]).stdout)
        #expect(mon["datalink"] as? Int == 2001)
        let adapters = mon["adapters"] as? [[String: Any]] ?? []
        #expect(adapters.contains { ($0["manufacturer"] as? String)?.contains("Realtek") == true })
        let empty = try CLI.run(["info", dir.appendingPathComponent("android_oppo_empty_header_only.cfa").path, "--json"])
        #expect(empty.status == 0)
        #expect(try CLI.json(empty.stdout)["frames"] as? Int == 0)
    }

    /// ATT PDU names, Core v5.4 Vol 3 Part F 3.4.8 Table 3.37, written from the spec.
    static let specATTNames: [String: String] = [
        "0x01": "Error Response", "0x02": "Exchange MTU Request", "0x03": "Exchange MTU Response",
        "0x04": "Find Information Request", "0x05": "Find Information Response",
        "0x06": "Find By Type Value Request", "0x07": "Find By Type Value Response",
        "0x08": "Read By Type Request", "0x09": "Read By Type Response", "0x0a": "Read Request", "0x0b": "Read Response",
        "0x0c": "Read Blob Request", "0x0d": "Read Blob Response", "0x0e": "Read Multiple Request", "0x0f": "Read Multiple Response",
        "0x10": "Read By Group Type Request", "0x11": "Read By Group Type Response", "0x12": "Write Request", "0x13": "Write Response",
        "0x16": "Prepare Write Request", "0x17": "Prepare Write Response", "0x18": "Execute Write Request", "0x19": "Execute Write Response",
        "0x1b": "Handle Value Notification", "0x1d": "Handle Value Indication", "0x1e": "Handle Value Confirmation",
        "0x52": "Write Command", "0xd2": "Signed Write Command",
    ]

    /// `info` names each ATT opcode in its text ("0x1b Handle Value Notification: 1047") with the
    /// count of `info --json`, whose `att` keys stay bare hex; `attNames` has the same keys.
    @Test(arguments: ["healthy.btsnoop", "long_read_write.btsnoop", "write_without_response.btsnoop"])
    func attOpcodesAreNamed(_ name: String) throws {
        let path = CLI.capture(name)
        let j = try CLI.json(try CLI.run(["info", path, "--json"]).stdout)
        let att = try #require(j["att"] as? [String: Int])
        let names = try #require(j["attNames"] as? [String: String])
        #expect(!att.isEmpty)
        #expect(Set(names.keys) == Set(att.keys))
        let text = try CLI.run(["info", path]).stdout
        for (op, count) in att {
            let spec = try #require(Self.specATTNames[op], "\(op) is not in the test's table")
            #expect(names[op] == spec)
            #expect(text.contains("\n  \(op) \(spec): \(count)\n"), "\(op)")
        }
    }

    @Test func notACaptureExitsTwoWithTheOffset() throws {
        let r = try CLI.run(["info", CLI.repoRoot.appendingPathComponent("README.md").path, "--json"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("not a capture"))
        #expect(r.stderr.contains("offset"))
        let missing = try CLI.run(["info", "/nonexistent/trace.log"])
        #expect(missing.status == 2)
        let usage = try CLI.run(["info"])
        #expect(usage.status == 2)
    }

    /// A capture cut inside a record: exit 0, `truncated` true, every complete frame counted.
    @Test func truncatedFileIsReadWithTheFlag() throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: CLI.capture("healthy.btsnoop"))))
        let full = try CLI.json(try CLI.run(["info", CLI.capture("healthy.btsnoop"), "--json"]).stdout)
        let path = try CLI.temporaryFile("cut.btsnoop", Array(bytes.dropLast(3)))
        let r = try CLI.run(["info", path, "--json"])
        #expect(r.status == 0)
        let j = try CLI.json(r.stdout)
        #expect(j["truncated"] as? Bool == true)
        #expect(j["frames"] as? Int == (full["frames"] as? Int ?? 0) - 1)
        #expect(r.stderr.contains("offset"))
    }
}
