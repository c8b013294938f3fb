import Foundation
import Testing
import TestSupport

/// CI trust you can configure: `--peer NAME|ADDR` scopes `check`, the report, `timeline` and `adv` to
/// the device under test; `check --baseline FILE` fails only on findings the file does not accept,
/// `--write-baseline FILE` writes it; `check --jsonl` findings carry `frames` as `--json` does.
@Suite struct CheckScopeTests {
    static let pool = CLI.repoRoot.appendingPathComponent("captures/pool_full.btsnoop").path

    static func findings(_ arguments: [String]) throws -> (status: Int32, findings: [[String: Any]]) {
        let r = try CLI.run(["check", "--jsonl", "--fail-on", "info"] + arguments)
        let row = try CLI.json(String(r.stdout.split(separator: "\n").first ?? ""))
        return (r.status, row["findings"] as? [[String: Any]] ?? [])
    }

    @Test("check --jsonl: every finding has the report's frames; frame is the first")
    func jsonlFrames() throws {
        let (_, rows) = try Self.findings([Self.pool])
        let report = try CLI.json(try CLI.run([Self.pool, "--json"]).stdout)["findings"] as? [[String: Any]] ?? []
        #expect(rows.count == report.count && rows.count >= 5)
        #expect(rows.map { $0["frames"] as? [Int] ?? [] } == report.map { $0["frames"] as? [Int] ?? [] })
        #expect(rows.contains { ($0["frames"] as? [Int])?.count ?? 0 > 1 })   // pool.full cites the attempt and its refusal
        for f in rows { #expect(f["frame"] as? Int == (f["frames"] as? [Int])?.first) }
        #expect(rows.allSatisfy { $0["accepted"] == nil })   // no baseline, no key
    }

    @Test("--peer keeps the findings about that device and those about the capture; an absent device is no pass")
    func peerScope() throws {
        let (_, all) = try Self.findings([Self.pool])
        let (status, mine) = try Self.findings(["--peer", "C0:11:22:33:44:02", Self.pool])
        #expect(status == 1)
        let messages = mine.map { $0["message"] as? String ?? "" }
        #expect(messages.contains { $0.contains("Disconnected from C0:11:22:33:44:02") })
        #expect(!messages.contains { $0.contains("C0:11:22:33:44:03") || $0.contains("C0:11:22:33:44:04") }, "\(messages)")
        #expect(mine.contains { $0["rule"] as? String == "pool.concurrent-connections" })   // about the capture as a whole
        #expect(mine.count < all.count)
        // Case does not matter for an address.
        #expect(try Self.findings(["--peer", "c0:11:22:33:44:02", Self.pool]).findings.count == mine.count)

        let absent = try CLI.run(["check", "--fail-on", "info", "--peer", "C0:11:22:33:44:99", Self.pool])
        #expect(absent.status == 2)
        #expect(!absent.stdout.contains("PASS"))
        #expect(absent.stdout.contains("ERROR") && absent.stdout.contains("nothing was checked"))

        let timeline = try CLI.run(["timeline", "--peer", "C0:11:22:33:44:03", Self.pool])
        #expect(timeline.status == 0)
        #expect(timeline.stdout.contains("peer C0:11:22:33:44:03") && !timeline.stdout.contains("peer C0:11:22:33:44:02"))
        let report = try CLI.run([Self.pool, "--json", "--peer", "C0:11:22:33:44:03"])
        let reported = (try CLI.json(report.stdout)["findings"] as? [[String: Any]] ?? []).map { $0["message"] as? String ?? "" }
        #expect(report.status == 0 && reported.contains { $0.contains("Disconnected from C0:11:22:33:44:03") })
        #expect(!reported.contains { $0.contains("C0:11:22:33:44:02") || $0.contains("C0:11:22:33:44:04") }, "\(reported)")
    }

    @Test("adv --peer lists that advertiser only", .enabled(if: CLI.sharedReal != nil, "../shared/captures/real is absent"))
    func advPeer() throws {
        let path = try #require(CLI.sharedReal).appendingPathComponent("nrf_sniffer_surplife_led_long.pcapng").path
        let all = try CLI.run(["adv", path]).stdout
        let one = try CLI.run(["adv", "--peer", "IOTBT812", path])
        #expect(one.status == 0)
        #expect(one.stdout.contains("IOTBT812") && one.stdout.contains("08:65:F0:17:58:12"))
        #expect(one.stdout.count < all.count)
    }

    @Test("--write-baseline then --baseline: accepted findings pass, a finding not in the file fails")
    func baseline() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bleanalyze-baseline-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("baseline.tsv").path
        let failing = try CLI.run(["check", "--fail-on", "info", Self.pool])
        #expect(failing.status == 1)
        #expect(failing.stderr.contains("--write-baseline"))   // the gate says how to accept
        let write = try CLI.run(["check", "--fail-on", "info", "--write-baseline", file, Self.pool])
        #expect(write.status == 0)
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text.contains("pool.full\tC0:11:22:33:44:04\t-"), "\(text)")
        #expect(text.contains("link.disconnect\tC0:11:22:33:44:02\t-"))

        let passing = try CLI.run(["check", "--fail-on", "info", "--baseline", file, Self.pool])
        #expect(passing.status == 0, "\(passing.stdout)")
        #expect(passing.stdout.hasPrefix("PASS") && passing.stdout.contains("accepted by the baseline"))
        let (status, rows) = try Self.findings(["--baseline", file, Self.pool])
        #expect(status == 0 && rows.allSatisfy { $0["accepted"] as? Bool == true })

        // One accepted finding taken out of the file: it is new again, and only it fails.
        let reduced = text.split(separator: "\n").filter { !$0.hasPrefix("link.disconnect\tC0:11:22:33:44:02") }.joined(separator: "\n") + "\n"
        try reduced.write(toFile: file, atomically: true, encoding: .utf8)
        let again = try CLI.run(["check", "--fail-on", "info", "--baseline", file, Self.pool])
        #expect(again.status == 1)
        let failed = again.stdout.split(separator: "\n").filter { $0.hasPrefix("      ") && !$0.hasPrefix("       ") }   // not its why: line
        #expect(failed.count == 1 && failed.first?.contains("Disconnected from C0:11:22:33:44:02") == true, "\(again.stdout)")

        try "pool.full only-two-fields\n".write(toFile: file, atomically: true, encoding: .utf8)
        let bad = try CLI.run(["check", "--baseline", file, Self.pool])
        #expect(bad.status != 0 && bad.stderr.contains("line 1"))
    }

    @Test("check never passes a file it could not decode: a link type it does not read, or no decodable frame")
    func undecodedIsNoPass() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bleanalyze-undecoded-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        func pcap(_ linkType: UInt32, _ record: [UInt8]) -> Data {
            var b: [UInt8] = [0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0]
            b += withUnsafeBytes(of: linkType.littleEndian, Array.init)
            b += [1, 0, 0, 0, 0, 0, 0, 0] + withUnsafeBytes(of: UInt32(record.count).littleEndian, Array.init)
                + withUnsafeBytes(of: UInt32(record.count).littleEndian, Array.init) + record
            return Data(b)
        }
        let wifi = dir.appendingPathComponent("wifi.pcap").path
        try pcap(105, [0x80, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]).write(to: URL(fileURLWithPath: wifi))
        let ppiWifi = dir.appendingPathComponent("ppi-wifi.pcap").path
        try pcap(192, [0, 0, 8, 0, 105, 0, 0, 0, 0x80, 0, 0, 0]).write(to: URL(fileURLWithPath: ppiWifi))
        for path in [wifi, ppiWifi] {
            let r = try CLI.run(["check", path])
            #expect(r.status == 2, "\(r.stdout)")
            #expect(!r.stdout.contains("PASS") && r.stdout.contains("ERROR"), "\(r.stdout)")
            let line = try CLI.json(try CLI.run(["check", "--jsonl", path]).stdout)
            #expect((line["error"] as? String)?.isEmpty == false)
        }
        #expect(try CLI.run(["check", wifi]).stdout.contains("802.11"))
    }
}
