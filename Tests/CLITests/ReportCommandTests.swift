import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import TestSupport
import Testing

/// The report, `check` (the CI gate) and `rules`: interface, exit codes, JUnit.
@Suite struct ReportCommandTests {
    @Test func reportJSONHasTheFindingsInterface() throws {
        let r = try CLI.run([CLI.capture("mtu_truncated_read.btsnoop"), "--json"])
        #expect(r.status == 0)
        let j = try CLI.json(r.stdout)
        #expect(j["schemaVersion"] as? Int == 1)
        let findings = try #require(j["findings"] as? [[String: Any]])
        let f = try #require(findings.first { $0["rule"] as? String == "mtu.truncated-read" })
        #expect(f["severity"] as? String == "warning")
        #expect(f["connection"] as? Int == 1)
        #expect(f["time"] is Int)
        #expect((f["frames"] as? [Int])?.isEmpty == false)
        #expect(f["message"] is String)
        // Every finding names a rule of a known family.
        let families = ["pool.", "flow.", "gatt.subscription", "gatt.unsubscribed", "mtu.", "att.", "security.", "adv.", "link."]
        for f in findings { #expect(families.contains { (f["rule"] as? String ?? "").hasPrefix($0) }) }
    }

    @Test func textReportShowsSummaryStoriesAndAdvice() throws {
        let out = try CLI.run([CLI.capture("flow_stall.btsnoop")]).stdout
        #expect(out.contains("Findings     0 errors, 1 warning"))
        #expect(out.contains("flow.skipped-ready"))
        #expect(out.contains("What to do:"))
        #expect(out.contains("Connection 1: handle 1"))
    }

    @Test func checkGatesOnTheLevelAndWritesJUnit() throws {
        let junit = FileManager.default.temporaryDirectory.appendingPathComponent("bleanalyze-\(getpid()).xml").path
        let clean = try CLI.run(["check", CLI.capture("healthy.btsnoop"), "--fail-on", "warning"])
        #expect(clean.status == 0)
        let failing = try CLI.run(["check", CLI.capture("healthy.btsnoop"), CLI.capture("flow_stall.btsnoop"),
                                   "--fail-on", "warning", "--junit", junit])
        #expect(failing.status == 1)
        let xml = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(xml.contains("<testsuites"))
        #expect(xml.contains("name=\"flow.skipped-ready\""))
        #expect(xml.contains("<failure type=\"warning\""))
        // Parse it as XML: well-formed, two suites.
        let doc = try XMLDocument(data: Data(xml.utf8))
        #expect(try doc.nodes(forXPath: "//testsuite").count == 2)
        // The same warning does not fail an error-level gate; rules can be switched off.
        #expect(try CLI.run(["check", CLI.capture("flow_stall.btsnoop"), "--fail-on", "error"]).status == 0)
        #expect(try CLI.run(["check", CLI.capture("flow_stall.btsnoop"), "--fail-on", "warning", "--rule", "flow.skipped-ready=off"]).status == 0)
        // A threshold raised above the stall makes it pass, too.
        #expect(try CLI.run(["check", CLI.capture("flow_stall.btsnoop"), "--fail-on", "warning", "--rule", "flow.skipped-ready.stall=5"]).status == 0)
        #expect(try CLI.run(["check", CLI.capture("flow_stall.btsnoop"), "--fail-on", "bogus"]).status == 2)
        #expect(try CLI.run(["check", CLI.capture("flow_stall.btsnoop"), "--rule", "no.such-rule=off"]).status == 2)
        #expect(try CLI.run(["check", CLI.repoRoot.appendingPathComponent("README.md").path]).status == 2)
    }

    @Test func rulesListsEveryRuleWithAdvice() throws {
        let r = try CLI.run(["rules", "--json"])
        #expect(r.status == 0)
        let rules = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
        #expect(rules.count >= 30)
        for rule in rules {
            #expect((rule["explanation"] as? String)?.count ?? 0 > 60, "\(rule["id"] ?? "")")
            #expect(["error", "warning", "info"].contains(rule["severity"] as? String ?? ""))
        }
        let text = try String(contentsOf: CLI.repoRoot.appendingPathComponent("docs/RULES.md"), encoding: .utf8)
        for rule in rules {
            #expect(text.contains("`\(rule["id"] as? String ?? "?")`"), "docs/RULES.md documents \(rule["id"] ?? "")")
            #expect((rule["firesWhen"] as? String)?.isEmpty == false, "\(rule["id"] ?? "") says when it fires")
        }
        // `make rules-doc` writes this output into docs/RULES.md: every line of it is there, in order.
        let md = try CLI.run(["rules", "--markdown"])
        #expect(md.status == 0)
        let table = md.stdout.split(separator: "\n").map(String.init)
        #expect(table.count == rules.count + 2)
        #expect(text.contains(table.joined(separator: "\n")), "docs/RULES.md's table is not `rules --markdown`: run `make rules-doc`")
        #expect(try CLI.run(["rules", "--markdown", "--json"]).status == 2)
    }
}

/// `packets` filters.
@Suite struct PacketFilterTests {
    func frames(_ args: [String]) throws -> [[String: Any]] {
        let r = try CLI.run(["packets", "--json"] + args)
        #expect(r.status == 0)
        return try r.stdout.split(separator: "\n").map { try CLI.json(String($0)) }
    }

    @Test func protocolFilters() throws {
        let smp = try frames([CLI.capture("pairing_ok.btsnoop"), "--smp"])
        #expect(!smp.isEmpty)
        for f in smp { #expect((f["layers"] as? [[String: Any]])?.contains { $0["protocol"] as? String == "SMP" } == true) }
        let hci = try frames([CLI.capture("healthy.btsnoop"), "--hci"])
        #expect(hci.allSatisfy { ["command", "event"].contains($0["type"] as? String ?? "") })
        let att = try frames([CLI.capture("healthy.btsnoop"), "--att"])
        let info = try CLI.json(try CLI.run(["info", CLI.capture("healthy.btsnoop"), "--json"]).stdout)
        let attTotal = (info["att"] as? [String: Int] ?? [:]).values.reduce(0, +)
        #expect(att.count == attTotal, "one ATT PDU per frame in this capture")
    }

    @Test func connectionAndTimeFilters() throws {
        let conn2 = try frames([CLI.capture("idle_connection.btsnoop"), "--conn", "2"])
        #expect(!conn2.isEmpty)
        let acl = conn2.filter { $0["type"] as? String == "acl" }
        #expect(!acl.isEmpty)
        let all = try frames([CLI.capture("healthy.btsnoop")])
        let late = try frames([CLI.capture("healthy.btsnoop"), "--since", "0.3"])
        #expect(late.count < all.count && !late.isEmpty)
        #expect(try CLI.run(["packets", CLI.capture("healthy.btsnoop"), "--conn", "nonsense"]).status == 2)
    }

    /// `--conn` matches connection handles by what the field is (`FieldID.connectionHandle`), not by a
    /// label ending in "Handle": an ATT Value Handle 0x0005 in a frame of connection 1 (handle 4)
    /// does not pull in frames of the connection on handle 5. Expected: tshark's ACL frames on the handle.
    @Test(.enabled(if: CLI.sharedReal != nil, "../shared/captures/real is absent"),
          .enabled(if: CLI.tool("tshark", ["-v"]), "tshark is not installed"))
    func connectionFilterMatchesConnectionHandlesOnly() throws {
        let capture = try #require(CLI.sharedReal).appendingPathComponent("android_jbd_bms_v13_repeated_discovery_att_only.btsnoop").path
        let acl = try frames([capture, "--conn", "1"]).filter { $0["type"] as? String == "acl" }
        let handles = acl.compactMap { frame -> Int? in
            let header = (frame["layers"] as? [[String: Any]])?.first
            return (header?["fields"] as? [[String: Any]])?.first { $0["name"] as? String == "Handle" }?["value"] as? Int
        }
        #expect(handles.count == acl.count)
        let handle = try #require(handles.first)
        #expect(Set(handles) == [handle])
        let tshark = try #require(Tool.run("tshark", ["-r", capture, "-Y", "bthci_acl.chandle == \(handle)", "-T", "fields", "-e", "frame.number"]))
        #expect(acl.count == tshark.split(separator: "\n").count)
    }
}
