import Foundation
import Testing
import TestSupport

/// `bleanalyze diff BEFORE AFTER` on pairs recorded with two Bumble devices (captures/diff/, made by
/// scripts/make_diff_pairs.py: one change each) and on real pairs of the same device. What changed
/// is read from the frames with tshark, never from the tool's own output.
@Suite struct DiffTests {
    static let dir = CLI.repoRoot.appendingPathComponent("captures/diff")
    static func pair(_ name: String) -> String { dir.appendingPathComponent(name).path }
    static let before = pair("before.btsnoop")
    static let hasTshark = CLI.tool("tshark", ["-v"])

    static func diff(_ after: String, _ extra: [String] = []) throws -> (status: Int32, json: [String: Any]) {
        let r = try CLI.run(["diff", before, after, "--json"] + extra)
        return (r.status, try CLI.json(r.stdout))
    }

    /// Frames matching a tshark display filter.
    static func frames(_ path: String, _ filter: String) throws -> [Int] {
        let out = try #require(Tool.run("tshark", ["-r", path, "-Y", filter, "-T", "fields", "-e", "frame.number"]))
        return out.split(separator: "\n").compactMap { Int($0) }
    }

    static func connection(_ json: [String: Any]) throws -> [String: Any] {
        let peers = try #require(json["peers"] as? [[String: Any]])
        #expect(peers.count == 1)
        #expect(peers.first?["match"] as? String == "name")   // bleanalyze-hr, advertised and read
        return try #require((peers.first?["connections"] as? [[String: Any]])?.first)
    }

    static func change(_ conn: [String: Any], _ metric: String) -> [String: Any]? {
        (conn["changes"] as? [[String: Any]])?.first { $0["metric"] as? String == metric }
    }

    @Test("the same capture twice: nothing changed, no regression, exit 0")
    func sameCapture() throws {
        let (status, json) = try Self.diff(Self.before, ["--fail-on", "regression"])
        #expect(status == 0)
        let conn = try Self.connection(json)
        #expect((conn["changes"] as? [[String: Any]] ?? []).allSatisfy { $0["verdict"] as? String == "same" })
        #expect((json["regressions"] as? [Any])?.isEmpty == true)
        #expect((json["peers"] as? [[String: Any]])?.first?["gatt"] as? [Any] != nil)   // compared, and empty
        let text = try CLI.run(["diff", Self.before, Self.before])
        #expect(text.status == 0 && text.stdout.contains("No regression."))
        #expect(text.stdout.split(separator: "\n").allSatisfy { $0.count <= 80 }, "\(text.stdout)")
    }

    @Test("smaller MTU: 247 → 64 at the Exchange MTU Response of each side", .enabled(if: hasTshark, "tshark is not installed"))
    func smallerMTU() throws {
        let after = Self.pair("after_small_mtu.btsnoop")
        let (_, json) = try Self.diff(after)
        let mtu = try #require(Self.change(try Self.connection(json), "mtu"))
        #expect(mtu["before"] as? Int == 247 && mtu["after"] as? Int == 64)
        #expect(mtu["verdict"] as? String == "worse")
        #expect(mtu["beforeFrame"] as? Int == (try Self.frames(Self.before, "btatt.opcode == 0x03")).first)
        #expect(mtu["afterFrame"] as? Int == (try Self.frames(after, "btatt.opcode == 0x03")).first)
        #expect(try Self.frames(after, "btatt.server_rx_mtu == 64 || btatt.client_rx_mtu == 64").count >= 1)
    }

    @Test("Write Request instead of Write Command: write completions appear, and why the writes are slower",
          .enabled(if: hasTshark, "tshark is not installed"))
    func writeRequests() throws {
        let after = Self.pair("after_write_request.btsnoop")
        // Write Requests: the CCCD write on both sides, plus the 30 writes after; Write Commands: the 30 before.
        let requests = try Self.frames(after, "btatt.opcode == 0x12")
        let requestsBefore = try Self.frames(Self.before, "btatt.opcode == 0x12")
        let commandsBefore = try Self.frames(Self.before, "btatt.opcode == 0x52")
        #expect(commandsBefore.count == 30 && requests.count == requestsBefore.count + 30)
        #expect(try Self.frames(after, "btatt.opcode == 0x52").isEmpty)
        let (_, json) = try Self.diff(after)
        let conn = try Self.connection(json)
        let writes = try #require((conn["latencies"] as? [[String: Any]])?.first { $0["kind"] as? String == "host-writes" })
        #expect((writes["before"] as? [String: Any])?["count"] as? Int == requestsBefore.count)
        #expect((writes["after"] as? [String: Any])?["count"] as? Int == requests.count)
        #expect(requests.contains((writes["after"] as? [String: Any])?["maxFrame"] as? Int ?? 0))
        let reasons = (conn["trafficReasons"] as? [[String: Any]] ?? [])
        let why = try #require(reasons.first { $0["kind"] as? String == "write-requests" })
        #expect(why["before"] as? Int == requestsBefore.count && why["after"] as? Int == requests.count)
        let sent = try #require((conn["traffic"] as? [[String: Any]])?.first { $0["direction"] as? String == "sent" })
        #expect(((sent["after"] as? [String: Any])?["limitedBy"] as? [String])?.contains("write-with-response") == true, "\(sent)")
    }

    @Test("a removed characteristic is a GATT change; --fail-on regression fails unless --allow-gatt-change",
          .enabled(if: hasTshark, "tshark is not installed"))
    func removedCharacteristic() throws {
        let after = Self.pair("after_removed_char.btsnoop")
        // Body Sensor Location (0x2A38) is declared before, not after.
        let declared = try Self.frames(Self.before, "btatt.uuid16 == 0x2a38")
        #expect(!declared.isEmpty)
        #expect(try Self.frames(after, "btatt.uuid16 == 0x2a38").isEmpty)
        let (status, json) = try Self.diff(after, ["--fail-on", "regression"])
        #expect(status == 1)
        let gatt = try #require((json["peers"] as? [[String: Any]])?.first?["gatt"] as? [[String: Any]])
        #expect(gatt.count == 1, "\(gatt)")
        #expect(gatt.first?["change"] as? String == "characteristic-removed")
        #expect((gatt.first?["uuid"] as? String)?.uppercased().contains("2A38") == true)
        #expect(declared.contains(gatt.first?["beforeFrame"] as? Int ?? 0))
        #expect((json["regressions"] as? [[String: Any]])?.contains { $0["kind"] as? String == "gatt-changed" } == true)
        let allowed = try CLI.run(["diff", Self.before, after, "--fail-on", "regression", "--allow-gatt-change"])
        #expect(allowed.status == 0, "\(allowed.stdout)")
        #expect(allowed.stdout.contains("characteristic removed: Body Sensor Location"))
    }

    @Test("a shorter supervision timeout: 720 → 100 ms at each LE Connection Complete", .enabled(if: hasTshark, "tshark is not installed"))
    func shorterTimeout() throws {
        let after = Self.pair("after_short_timeout.btsnoop")
        let (_, json) = try Self.diff(after)
        let timeout = try #require(Self.change(try Self.connection(json), "timeout"))
        #expect(timeout["before"] as? Int == 72 && timeout["after"] as? Int == 10)
        #expect(timeout["unit"] as? String == "10ms")
        #expect(timeout["beforeFrame"] as? Int == (try Self.frames(Self.before, "bthci_evt.le_meta_subevent == 0x01")).first)
        #expect(timeout["afterFrame"] as? Int == (try Self.frames(after, "bthci_evt.le_meta_subevent == 0x01")).first)
        let text = try CLI.run(["diff", Self.before, after]).stdout
        #expect(text.contains("supervision timeout: 720 ms → 100 ms"), "\(text)")
    }

    @Test("--json validates against docs/diff-schema.json", .enabled(if: FileManager.default.isExecutableFile(atPath: SchemaTests.python.path), ".venv absent"))
    func schema() throws {
        let scratch = Built.scratch("diff-schema")
        var documents: [String] = []
        for (i, name) in ["before.btsnoop", "after_small_mtu.btsnoop", "after_write_request.btsnoop", "after_removed_char.btsnoop",
                          "after_short_timeout.btsnoop"].enumerated() {
            let file = scratch.appendingPathComponent("\(i).json")
            try Data(try CLI.run(["diff", Self.before, Self.pair(name), "--json"]).stdout.utf8).write(to: file)
            documents.append("diff=" + file.path)
        }
        let (status, text) = try Tool.outcome(SchemaTests.python, ["-c", SchemaTests.validator, SchemaTests.schema.deletingLastPathComponent().path] + documents)
        #expect(status == 0 && text.contains("validated 5 documents, 0 errors"), "\(text)")
    }

    @Test("--html writes one page")
    func html() throws {
        let out = Built.scratch("diff-html").appendingPathComponent("d.html").path
        let r = try CLI.run(["diff", Self.before, Self.pair("after_small_mtu.btsnoop"), "--html", out])
        #expect(r.status == 0)
        let page = try String(contentsOfFile: out, encoding: .utf8)
        #expect(page.hasPrefix("<!DOCTYPE html>") && page.contains("ATT MTU: 247 → 64"))
    }

    // MARK: real pairs

    /// Two captures of the same device from ../shared/captures/real: the peer is paired (not by a
    /// random address), and what the frames show changed is reported with its frames.
    @Test("real pair: WHAD legacy pairing, then the LTK reconnect (no pairing, encryption with the stored key)",
          .enabled(if: CLI.sharedReal != nil && hasTshark, "../shared/captures/real or tshark is absent"))
    func whadLegacyThenReconnect() throws {
        let real = try #require(CLI.sharedReal)
        let b = real.appendingPathComponent("lell_phdr_whad_legacy_pairing_encrypted.pcap").path
        let a = real.appendingPathComponent("lell_phdr_whad_ltk_reconnect_encrypted.pcap").path
        let r = try CLI.run(["diff", b, a, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try CLI.json(r.stdout)
        let peers = try #require(json["peers"] as? [[String: Any]])
        let paired = peers.filter { $0["before"] as? [String: Any] != nil && $0["after"] as? [String: Any] != nil }
        #expect(paired.count == 1, "\(peers)")
        #expect(paired.first?["match"] as? String != "none")
        let conn = try #require((paired.first?["connections"] as? [[String: Any]])?.first)
        // Pairing Request (SMP code 0x01) before; none after.
        let pairingBefore = try Self.frames(b, "btsmp.opcode == 0x01")
        #expect(!pairingBefore.isEmpty)
        #expect(try Self.frames(a, "btsmp.opcode == 0x01").isEmpty)
        let pairing = try #require(Self.change(conn, "pairing"))
        #expect(pairing["after"] is NSNull)
        #expect(pairing["beforeFrame"] as? Int ?? 0 >= pairingBefore.first ?? Int.max)
        // Both encrypt: LL_START_ENC_REQ (LL control opcode 0x05) on each side.
        let encrypt = try #require(Self.change(conn, "encrypt"))
        #expect(encrypt["before"] as? Int != nil && encrypt["after"] as? Int != nil)
        let startBefore = try Self.frames(b, "btle.control_opcode == 0x05"), startAfter = try Self.frames(a, "btle.control_opcode == 0x05")
        #expect(!startBefore.isEmpty && !startAfter.isEmpty)
    }

    @Test("real pairs of one device: peers paired, every frame cited exists in its capture",
          .enabled(if: CLI.sharedReal != nil, "../shared/captures/real is absent"))
    func realPairsCiteFrames() throws {
        let real = try #require(CLI.sharedReal)
        let pairs = [("android_jkbms_b5a24s_att_app_error.btsnoop", "android_jkbms_long_session_reconnects.btsnoop"),
                     ("android_jbd_bms_v13_repeated_discovery_att_only.btsnoop", "jbd_bms_auth_datalink1001_att.btsnoop")]
        for (x, y) in pairs {
            let b = real.appendingPathComponent(x).path, a = real.appendingPathComponent(y).path
            let r = try CLI.run(["diff", b, a, "--json"])
            #expect(r.status == 0, "\(x): \(r.stderr)")
            let json = try CLI.json(r.stdout)
            let framesBefore = (json["before"] as? [String: Any])?["frames"] as? Int ?? 0
            let framesAfter = (json["after"] as? [String: Any])?["frames"] as? Int ?? 0
            let peers = try #require(json["peers"] as? [[String: Any]])
            #expect(peers.contains { $0["match"] as? String != "none" }, "\(x) ↔ \(y): no peer paired")
            for p in peers {
                for c in p["connections"] as? [[String: Any]] ?? [] {
                    for ch in c["changes"] as? [[String: Any]] ?? [] {
                        if let f = ch["beforeFrame"] as? Int { #expect((1...framesBefore).contains(f), "\(x) \(ch)") }
                        if let f = ch["afterFrame"] as? Int { #expect((1...framesAfter).contains(f), "\(y) \(ch)") }
                    }
                }
            }
            let text = try CLI.run(["diff", b, a]).stdout
            let lines = text.split(separator: "\n").map(String.init)
            #expect(lines.dropFirst(2).allSatisfy { $0.count <= 80 }, "\(x): \(text)")   // but the paths
        }
    }
}
