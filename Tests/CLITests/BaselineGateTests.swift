import Foundation
import Testing
import TestSupport

/// The CI gate on real devices (issue 33): baseline entries carry a count and a severity and name the
/// peer by name, address, GATT table or `*`; a redacted copy of the same log (new addresses, new
/// names: plain `redact`) still passes through the GATT table; a device whose resolvable private
/// address changes between connections passes by its identity address; a
/// count or severity that grows fails, saying why; old three-field files read as before; JUnit
/// failures carry the why line and its frames; `--conn` takes a peer name.
@Suite struct BaselineGateTests {
    static let healthy = CLI.repoRoot.appendingPathComponent("captures/healthy.btsnoop").path

    static func write(_ text: String, _ name: String) throws -> String {
        let path = Built.scratch("baseline-gate").appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// `check --fail-on LEVEL --write-baseline NAME CAPTURE` (which must pass): the file and its entries.
    static func written(_ capture: String, failOn: String, _ name: String) throws -> (file: String, entries: [String]) {
        let file = try write("", name)
        let r = try CLI.run(["check", "--fail-on", failOn, "--write-baseline", file, capture])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        return (file, try lines(file))
    }

    static func lines(_ path: String) throws -> [String] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") }
    }

    /// The PEER column of the written entry for `rule`, split at `|`.
    static func peer(_ rule: String, _ entries: [String]) throws -> [String] {
        let line = try #require(entries.first { $0.hasPrefix(rule + "\t") }, "\(entries)")
        return line.split(separator: "\t").dropFirst().first.map { $0.split(separator: "|").map(String.init) } ?? []
    }

    @Test("--write-baseline names the peer by its name and GATT table, with count and severity; a redacted copy passes")
    func redactedCopyPasses() throws {
        let (file, entries) = try Self.written(Self.healthy, failOn: "info", "healthy.tsv")
        // healthy.btsnoop reads the GAP Device Name "bleanalyze-hr" (captures/README.md) and
        // discovers the whole GATT table.
        let peer = try Self.peer("link.disconnect", entries)
        #expect(peer.count == 2 && peer[0] == "bleanalyze-hr" && peer[1].hasPrefix("gatt:") && peer[1].count == 13, "\(entries)")
        #expect(entries.contains("link.disconnect\t\(peer.joined(separator: "|"))\t-\t1\tinfo"), "\(entries)")
        let redacted = Built.scratch("baseline-gate").appendingPathComponent("healthy-redacted.btsnoop").path
        #expect(try CLI.run(["redact", Self.healthy, "-o", redacted, "--keep-names"]).status == 0)
        // The copy has new addresses…
        let report = try CLI.run(["timeline", redacted]).stdout
        #expect(!report.contains("C0:11:22:33:44:02"), "\(report)")
        // …and the gate still accepts its findings.
        let pass = try CLI.run(["check", "--fail-on", "info", "--baseline", file, redacted])
        #expect(pass.status == 0, "\(pass.stdout)")
        // Written by address (as before), the same baseline fails on the copy: why names are written.
        let byAddress = try Self.write("link.disconnect\tC0:11:22:33:44:02\t-\nlink.disconnect-summary\t-\t-\n", "address.tsv")
        #expect(try CLI.run(["check", "--fail-on", "info", "--baseline", byAddress, Self.healthy]).status == 0)
        #expect(try CLI.run(["check", "--fail-on", "info", "--baseline", byAddress, redacted]).status == 1)
        // A fully redacted copy (names replaced too: plain `redact`) passes with the written baseline,
        // by the GATT table redaction keeps, and with `*` for the peer.
        let anonymous = Built.scratch("baseline-gate").appendingPathComponent("healthy-anon.btsnoop").path
        #expect(try CLI.run(["redact", Self.healthy, "-o", anonymous]).status == 0)
        let anonymousReport = try CLI.run(["timeline", anonymous]).stdout
        #expect(!anonymousReport.contains("bleanalyze-hr"), "\(anonymousReport)")
        let written = try CLI.run(["check", "--fail-on", "info", "--baseline", file, anonymous])
        #expect(written.status == 0, "\(written.stdout)")
        let star = try Self.write("link.disconnect\t*\t-\t1\tinfo\nlink.disconnect-summary\t*\t-\t1\tinfo\n", "star.tsv")
        #expect(try CLI.run(["check", "--fail-on", "info", "--baseline", star, anonymous]).status == 0)
        // The name alone does not match the copy; another table's fingerprint does not either.
        let named = try Self.write("link.disconnect\tbleanalyze-hr\t-\t1\tinfo\nlink.disconnect-summary\t-\t-\t1\tinfo\n", "named.tsv")
        #expect(try CLI.run(["check", "--fail-on", "info", "--baseline", named, anonymous]).status == 1)
        let other = try Self.write("link.disconnect\tgatt:00000000\t-\t1\tinfo\nlink.disconnect-summary\t-\t-\t1\tinfo\n", "other.tsv")
        #expect(try CLI.run(["check", "--fail-on", "info", "--baseline", other, anonymous]).status == 1)
    }

    /// captures/gate/rpa_rotation.btsnoop (scripts/make_rpa_rotation.py): the peripheral pairs on RPA
    /// 55:92:01:3D:FF:BE (frame 31), sends Identity Address Information C0:11:22:33:44:02 (frame 53),
    /// and comes back on RPA 5D:A1:DA:B6:7B:8D (frame 129); the central encrypts that link with the
    /// bond's LTK (LE Enable Encryption frames 49 and 130 carry the same key 41 cf 83 …).
    static let rotation = CLI.repoRoot.appendingPathComponent("captures/gate/rpa_rotation.btsnoop").path

    @Test("a resolvable private address that changes between connections: a baseline by identity address passes both links")
    func addressRotation() throws {
        let (file, entries) = try Self.written(Self.rotation, failOn: "info", "rotation.tsv")
        // Both disconnects (frames 126 and 192) under the identity address: one entry, count 2.
        let peer = try Self.peer("link.disconnect", entries)
        #expect(peer.first == "C0:11:22:33:44:02", "\(entries)")
        #expect(entries.contains { $0.hasPrefix("link.disconnect\tC0:11:22:33:44:02") && $0.hasSuffix("\t-\t2\tinfo") }, "\(entries)")
        let byIdentity = try Self.write("link.disconnect\tC0:11:22:33:44:02\t-\t2\tinfo\nlink.disconnect-summary\t-\t-\t1\tinfo\n", "identity.tsv")
        let pass = try CLI.run(["check", "--fail-on", "info", "--baseline", byIdentity, Self.rotation])
        #expect(pass.status == 0, "\(pass.stdout)")
        // One accepted: the second link's disconnect (frame 192, from the new RPA) fails.
        let one = try Self.write("link.disconnect\tC0:11:22:33:44:02\t-\t1\tinfo\nlink.disconnect-summary\t-\t-\t1\tinfo\n", "identity1.tsv")
        let grew = try CLI.run(["check", "--fail-on", "info", "--baseline", one, Self.rotation])
        #expect(grew.status == 1 && grew.stdout.contains("frames #192") && grew.stdout.contains("more than the 1"), "\(grew.stdout)")
        // The first RPA names only the first link.
        let byRPA = try Self.write("link.disconnect\t55:92:01:3D:FF:BE\t-\t2\tinfo\nlink.disconnect-summary\t-\t-\t1\tinfo\n", "rpa.tsv")
        #expect(try CLI.run(["check", "--fail-on", "info", "--baseline", byRPA, Self.rotation]).status == 1)
        // Redacted (addresses replaced, keys zeroed), the written baseline passes by the GATT table.
        let redacted = Built.scratch("baseline-gate").appendingPathComponent("rotation-redacted.btsnoop").path
        #expect(try CLI.run(["redact", Self.rotation, "-o", redacted]).status == 0)
        let copy = try CLI.run(["check", "--fail-on", "info", "--baseline", file, redacted])
        #expect(copy.status == 0, "\(copy.stdout)")
    }

    @Test("a count or a severity beyond the baseline fails, saying which line; a three-field line accepts any number")
    func countAndSeverity() throws {
        let (file, entries) = try Self.written(Self.healthy, failOn: "info", "counts.tsv")
        let zero = try Self.write(entries.map { $0.hasPrefix("link.disconnect\t") ? $0.replacingOccurrences(of: "\t1\tinfo", with: "\t0\tinfo") : $0 }
            .joined(separator: "\n") + "\n", "zero.tsv")
        let grew = try CLI.run(["check", "--fail-on", "info", "--baseline", zero, Self.healthy])
        #expect(grew.status == 1)
        #expect(grew.stdout.contains("baseline: more than the 0 the baseline accepts (line"), "\(grew.stdout)")
        let old = try Self.write("link.disconnect\tbleanalyze-hr\t-\nlink.disconnect-summary\t-\t-\n", "old.tsv")
        #expect(try CLI.run(["check", "--fail-on", "info", "--baseline", old, Self.healthy]).status == 0)
        let bad = try Self.write("link.disconnect\t*\t-\tmany\n", "bad.tsv")
        let refused = try CLI.run(["check", "--baseline", bad, Self.healthy])
        #expect(refused.status == 2 && refused.stderr.contains("line 1"))
    }

    @Test("real device: three link losses accepted as 3 warnings; 2 accepted fails, as does info; a redacted copy passes and fails alike",
          .enabled(if: CLI.sharedReal != nil, "../shared/captures/real is absent"))
    func realCountsAndRedaction() throws {
        let capture = try #require(CLI.sharedReal).appendingPathComponent("android_ledble_supervision_timeout_reconnect_loop.btsnoop").path
        let (file, entries) = try Self.written(capture, failOn: "warning", "ledble.tsv")
        // Three Disconnection Complete events with 0x08 Connection Timeout on the LEDBLE's links
        // (Tests/Labels/android_ledble_supervision_timeout_reconnect_loop.labels.json).
        let line = try #require(entries.first { $0.hasPrefix("link.disconnect\t") })
        let peer = try Self.peer("link.disconnect", entries)
        #expect(peer.first == "LEDBLE-78634D50" && peer.count == 2 && peer[1].hasPrefix("gatt:"), "\(entries)")
        let peerText = peer.joined(separator: "|")
        #expect(line == "link.disconnect\t\(peerText)\t-\t3\twarning", "\(entries)")
        #expect(try CLI.run(["check", "--fail-on", "warning", "--baseline", file, capture]).status == 0)
        let two = try Self.write(entries.map { $0 == line ? "link.disconnect\t\(peerText)\t-\t2\twarning" : $0 }.joined(separator: "\n") + "\n", "two.tsv")
        let more = try CLI.run(["check", "--fail-on", "warning", "--baseline", two, capture])
        #expect(more.status == 1 && more.stdout.contains("more than the 2"), "\(more.stdout)")
        #expect(more.stdout.components(separatedBy: "\n      WARNING").count - 1 == 1)   // only the third fails
        let info = try Self.write(entries.map { $0 == line ? "link.disconnect\t\(peerText)\t-\t3\tinfo" : $0 }.joined(separator: "\n") + "\n", "info.tsv")
        let worse = try CLI.run(["check", "--fail-on", "warning", "--baseline", info, capture])
        #expect(worse.status == 1 && worse.stdout.contains("warning is above the info the baseline accepts"), "\(worse.stdout)")
        // Plain `redact`: the name LEDBLE-78634D50 and the addresses are replaced, the GATT table kept.
        let redacted = Built.scratch("baseline-gate").appendingPathComponent("ledble-redacted.btsnoop").path
        #expect(try CLI.run(["redact", capture, "-o", redacted]).status == 0)
        let copyReport = try CLI.run(["timeline", redacted]).stdout
        #expect(!copyReport.contains("LEDBLE-78634D50"), "\(copyReport)")
        let pass = try CLI.run(["check", "--fail-on", "warning", "--baseline", file, redacted])
        #expect(pass.status == 0, "\(pass.stdout)")
        let moreOnCopy = try CLI.run(["check", "--fail-on", "warning", "--baseline", two, redacted])
        #expect(moreOnCopy.status == 1 && moreOnCopy.stdout.contains("more than the 2"), "\(moreOnCopy.stdout)")
        let worseOnCopy = try CLI.run(["check", "--fail-on", "warning", "--baseline", info, redacted])
        #expect(worseOnCopy.status == 1 && worseOnCopy.stdout.contains("warning is above the info"), "\(worseOnCopy.stdout)")
    }

    @Test("JUnit failures carry the why line with its cause kind and frames")
    func junitWhy() throws {
        let capture = CLI.repoRoot.appendingPathComponent("captures/cause_peer_reset.btsnoop").path
        let out = Built.scratch("baseline-gate").appendingPathComponent("junit.xml").path
        let r = try CLI.run(["check", "--fail-on", "info", "--junit", out, capture])
        #expect(r.status == 1)
        let xml = try String(contentsOfFile: out, encoding: .utf8)
        let json = try CLI.json(try CLI.run([capture, "--json"]).stdout)
        let findings = json["findings"] as? [[String: Any]] ?? []
        let caused = try #require(findings.first { ($0["cause"] as? [String: Any])?["kind"] as? String == "peer-reset" })
        let cause = try #require(caused["cause"] as? [String: Any])
        let frames = (cause["frames"] as? [Int] ?? []).map { "#\($0)" }.joined(separator: ", ")
        #expect(xml.contains("why: "), "\(xml)")
        #expect(xml.contains("[peer-reset; \(frames)]"), "\(xml)")
        #expect(r.stdout.contains("        why: "))
    }

    @Test("--conn takes a peer name in packets and timeline", .enabled(if: CLI.tool("tshark", ["-v"]), "tshark is not installed"))
    func connByName() throws {
        let byName = try CLI.run(["packets", "--json", "--conn", "BLEANALYZE-HR", Self.healthy])
        #expect(byName.status == 0, "\(byName.stderr)")
        let frames = byName.stdout.split(separator: "\n").compactMap { try? CLI.json(String($0))["frame"] as? Int }
        // Every ACL frame of the connection (handle from tshark's LE Connection Complete) is in it.
        let handle = try #require(Tool.run("tshark", ["-r", Self.healthy, "-Y", "bthci_evt.le_meta_subevent == 0x01", "-T", "fields",
                                                      "-e", "bthci_evt.connection_handle"])?.split(separator: "\n").first)
        let acl = try #require(Tool.run("tshark", ["-r", Self.healthy, "-Y", "bthci_acl.chandle == \(handle)", "-T", "fields", "-e", "frame.number"]))
            .split(separator: "\n").compactMap { Int($0) }
        #expect(!acl.isEmpty && Set(acl).isSubset(of: Set(frames)), "\(acl.count) ACL frames, \(frames.count) printed")
        let timeline = try CLI.run(["timeline", "--conn", "bleanalyze-hr", Self.healthy])
        #expect(timeline.status == 0 && timeline.stdout.contains("bleanalyze-hr"))
        let none = try CLI.run(["packets", "--conn", "no-such-device", Self.healthy])
        #expect(none.status == 2 && none.stderr.contains("no connection to a peer named no-such-device"))
    }
}
