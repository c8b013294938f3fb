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
