import BLECapture
import Foundation
import Testing
import TestSupport

/// `bleanalyze check PATH... --jsonl`: one line per capture, against docs/check-jsonl-schema.json, and
/// each field against an independent source: SHA-256 from `sha256sum` and the corpus's SHA256SUMS,
/// controller versions and Device Information strings from tshark, PacketLogger notes from tshark,
/// findings from `bleanalyze FILE --json` (the two commands must agree).
@Suite struct CheckJSONLTests {
    static let hasTshark = CLI.tool("tshark", ["-v"])

    static func lines(_ arguments: [String]) throws -> (status: Int32, rows: [[String: Any]], stderr: String) {
        let r = try CLI.run(["check", "--jsonl"] + arguments)
        let rows = try r.stdout.split(separator: "\n").map { try CLI.json(String($0)) }
        return (r.status, rows, r.stderr)
    }

    static func byName(_ rows: [[String: Any]]) -> [String: [String: Any]] {
        Dictionary(rows.map { (URL(fileURLWithPath: $0["file"] as? String ?? "").lastPathComponent, $0) }) { a, _ in a }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: SchemaTests.python.path), ".venv absent (make venv): no jsonschema"))
    func everyLineValidatesAndAgreesWithTheReport() throws {
        var dirs = [CLI.repoRoot.appendingPathComponent("captures").path]
        if let real = CLI.sharedReal { dirs.append(real.path) }
        let (status, rows, _) = try Self.lines(dirs)
        #expect(status == 1, "findings at error level exist in captures/")
        // One line per capture: every capture the other CLI tests use, nothing else (README.md, .json skipped).
        let expected = Set(try CLI.allCaptures() + CLI.subdirectoryCaptures())   // the walk finds captures/diff/ and gate/ too
        #expect(Set(rows.compactMap { $0["file"] as? String }) == expected)
        #expect(rows.count == expected.count)

        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bleanalyze-jsonl-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var documents: [String] = []
        for (i, row) in rows.enumerated() {
            let file = dir.appendingPathComponent("\(i).json")
            try JSONSerialization.data(withJSONObject: row).write(to: file)
            documents.append("check-jsonl=" + file.path)
            // The findings are the report's: rule, severity, connection, frames, message, in order; `frame` is the first.
            let path = try #require(row["file"] as? String)
            let report = try CLI.json(try CLI.run([path, "--json"]).stdout)
            let want = (report["findings"] as? [[String: Any]] ?? []).map {
                [$0["rule"] as? String ?? "", $0["severity"] as? String ?? "", "\($0["connection"] ?? "null")",
                 "\(($0["frames"] as? [Int]) ?? [])", $0["message"] as? String ?? ""]
            }
            let got = (row["findings"] as? [[String: Any]] ?? []).map {
                [$0["rule"] as? String ?? "", $0["severity"] as? String ?? "", "\($0["connection"] ?? "null")",
                 "\(($0["frames"] as? [Int]) ?? [])", $0["message"] as? String ?? ""]
            }
            for f in row["findings"] as? [[String: Any]] ?? [] {
                #expect((f["frame"] as? Int) == (f["frames"] as? [Int])?.first, "\(path): `frame` is the first of `frames`")
            }
            #expect(got == want, "\(path)")
            #expect(row["frames"] as? Int == (report["capture"] as? [String: Any])?["frames"] as? Int, "\(path)")
            let counts = Dictionary(grouping: got, by: { $0[0] }).mapValues(\.count)
            #expect((row["ruleCounts"] as? [String: Int]) ?? [:] == counts, "\(path)")
        }
        let (status2, text) = try Tool.outcome(SchemaTests.python, ["-c", SchemaTests.validator, CLI.repoRoot.appendingPathComponent("docs").path] + documents)
        #expect(status2 == 0 && text.contains("validated \(documents.count) documents, 0 errors"), "\(text)")
    }

    /// SHA-256 against the corpus's published SHA256SUMS and coreutils' sha256sum.
    @Test(.enabled(if: CLI.sharedReal != nil && CLI.tool("sha256sum", ["--version"]), "needs ../shared/captures/real and sha256sum"))
    func sha256MatchesSha256sumAndTheCorpusList() throws {
        let real = try #require(CLI.sharedReal)
        let sums = try String(contentsOf: real.appendingPathComponent("SHA256SUMS"), encoding: .utf8)
        var published: [String: String] = [:]
        for line in sums.split(separator: "\n") {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            if parts.count == 2 { published[String(parts[1].drop(while: { $0 == "*" }))] = String(parts[0]) }
        }
        let own = CLI.capture("healthy.btsnoop.gz")
        let (_, rows, _) = try Self.lines([real.path, own])
        let rowsByName = Self.byName(rows)
        #expect(published.count >= 29)
        for (name, sum) in published { #expect(rowsByName[name]?["sha256"] as? String == sum, "\(name)") }
        let coreutils = try #require(Tool.run("sha256sum", [own])).split(separator: " ").first.map(String.init)
        #expect(rowsByName["healthy.btsnoop.gz"]?["sha256"] as? String == coreutils)
    }

    /// The controller's Read Local Version Information as tshark decodes it (the last answer in the
    /// log), and the iOS PacketLogger header notes as tshark shows them.
    @Test(.enabled(if: CLI.sharedReal != nil && hasTshark, "needs ../shared/captures/real and tshark"))
    func hostFactsMatchTshark() throws {
        let real = try #require(CLI.sharedReal)
        let (_, rows, _) = try Self.lines([real.path])
        var checked = 0
        for row in rows {
            let path = try #require(row["file"] as? String)
            let out = Tool.run("tshark", ["-r", path, "-Y", "bthci_evt.hci_vers_nr", "-T", "fields", "-e", "bthci_evt.hci_vers_nr",
                                          "-e", "bthci_evt.lmp_vers_nr", "-e", "bthci_evt.comp_id", "-e", "bthci_evt.lmp_sub_vers_nr"]) ?? ""
            let controller = (row["host"] as? [String: Any])?["controller"] as? [String: Any]
            guard let last = out.split(separator: "\n").last else {
                if !path.contains("nrf_") && !path.contains("lell_") { #expect(controller == nil, "\(path): no Read Local Version in tshark") }
                continue
            }
            // "0x09,0<TAB>0x09<TAB>0x001d<TAB>702": HCI version,revision; LMP version; company; LMP subversion.
            let f = last.split(separator: "\t").map(String.init)
            let hci = f[0].split(separator: ",")
            let c = try #require(controller, "\(path)")
            #expect(c["hciVersion"] as? Int == Int(hci[0].dropFirst(2), radix: 16), "\(path)")
            #expect(c["hciRevision"] as? Int == Int(hci[1]), "\(path)")
            #expect(c["lmpVersion"] as? Int == Int(f[1].dropFirst(2), radix: 16), "\(path)")
            #expect(c["manufacturerId"] as? Int == Int(f[2].dropFirst(2), radix: 16), "\(path)")
            #expect(c["lmpSubversion"] as? Int == Int(f[3]), "\(path)")
            checked += 1
        }
        #expect(checked >= 10)
        let ios = try #require(Self.byName(rows)["ios_packetlogger_peripage_printer_le.pklg"]?["host"] as? [String: Any])
        let notes = try #require(Tool.run("tshark", ["-r", real.appendingPathComponent("ios_packetlogger_peripage_printer_le.pklg").path,
                                                     "-Y", "packetlogger.type == 0xfc", "-T", "fields", "-e", "packetlogger.info"]))
        for (key, field) in [("Product: ", "product"), ("Software: ", "software"), ("Chipset: ", "chipset"),
                             ("Firmware Version: ", "controllerFirmware"), ("Bluetooth Host: ", "bluetoothHost")] {
            let line = notes.split(separator: "\n").first { $0.hasPrefix(key) }.map { String($0.dropFirst(key.count)) }
            #expect(line != nil && ios[field] as? String == line, "\(field)")
        }
    }

    /// Device Information strings: every DIS read response tshark decodes in the corpus shows on the peer.
    @Test(.enabled(if: CLI.sharedReal != nil && hasTshark, "needs ../shared/captures/real and tshark"))
    func deviceInformationMatchesTshark() throws {
        let real = try #require(CLI.sharedReal)
        let (_, rows, _) = try Self.lines([real.path])
        let fields = [("btatt.manufacturer_string", "manufacturer"), ("btatt.model_number_string", "model"),
                      ("btatt.firmware_revision_string", "firmware"), ("btatt.software_revision_string", "software"),
                      ("btatt.hardware_revision_string", "hardware")]
        var checked = 0
        for row in rows {
            let path = try #require(row["file"] as? String)
            guard !path.hasSuffix(".pcapng"), !path.hasSuffix(".pcap") else { continue }   // air captures: no HCI ATT in tshark's fields
            let out = Tool.run("tshark", ["-r", path, "-Y", "btatt.opcode == 0x0b", "-T", "fields"] + fields.flatMap { ["-e", $0.0] }) ?? ""
            let peers = row["peers"] as? [[String: Any]] ?? []
            for line in out.split(separator: "\n") {
                let values = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                for (i, (_, key)) in fields.enumerated() where i < values.count && !values[i].isEmpty {
                    #expect(peers.contains { $0[key] as? String == values[i] }, "\(path): \(key) \(values[i])")
                    checked += 1
                }
            }
        }
        #expect(checked >= 6)
    }

    /// A directory of good, damaged and unrelated files: damaged captures become error rows, the run
    /// goes on, unrelated files are skipped; a bugreport zip's build fingerprint is read.
    @Test func unreadableFilesBecomeErrorRowsAndTheWalkGoesOn() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bleanalyze-walk-\(getpid())")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("phone/logs"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let healthy = try Data(contentsOf: URL(fileURLWithPath: CLI.capture("healthy.btsnoop")))
        try healthy.write(to: dir.appendingPathComponent("phone/logs/renamed.dat"))              // a capture by its bytes
        try Data().write(to: dir.appendingPathComponent("empty.btsnoop"))                       // a capture by its name, empty
        try Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }).write(to: dir.appendingPathComponent("noise.pklg"))
        try Data(healthy.prefix(40)).write(to: dir.appendingPathComponent("cut.btsnoop"))       // header and a partial record
        try Data("notes\n".utf8).write(to: dir.appendingPathComponent("README.md"))             // skipped
        let fingerprint = "google/husky/husky:14/AP1A.240305.019/11413474:user/release-keys"
        var zip = FieldLogArchiveWriter(format: .zip)
        zip.add("bugreport-husky-AP1A.txt", text: "========================================================\n== dumpstate: 2024-03-20 10:00:00\n"
                + "========================================================\n\nBuild: AP1A.240305.019\nBuild fingerprint: '\(fingerprint)'\n")
        zip.add("FS/data/misc/bluetooth/logs/btsnoop_hci.log", [UInt8](healthy))
        try zip.write(to: dir.appendingPathComponent("phone/bugreport.zip").path)

        let (status, rows, stderr) = try Self.lines([dir.path])
        #expect(status == 2, "an unreadable file gives exit 2")
        let byName = Self.byName(rows)
        #expect(Set(byName.keys) == ["renamed.dat", "empty.btsnoop", "noise.pklg", "cut.btsnoop", "bugreport.zip"])
        #expect(stderr.contains("skipped 1 files"))
        for bad in ["empty.btsnoop", "noise.pklg"] {
            #expect(byName[bad]?["error"] as? String != nil, "\(bad)")
            #expect(byName[bad]?["frames"] is NSNull)
        }
        #expect(byName["renamed.dat"]?["error"] is NSNull)
        #expect(byName["renamed.dat"]?["format"] as? String == "btsnoop")
        // A capture cut inside its first record is read (zero whole frames), not an error.
        #expect(byName["cut.btsnoop"]?["error"] is NSNull)
        let zipRow = try #require(byName["bugreport.zip"])
        #expect((zipRow["host"] as? [String: Any])?["buildFingerprint"] as? String == fingerprint)
        #expect((zipRow["fieldLog"] as? [String: Any])?["container"] as? String == "zip")
        #expect(zipRow["frames"] as? Int == byName["renamed.dat"]?["frames"] as? Int)
        #expect(zipRow["sha256"] as? String != byName["renamed.dat"]?["sha256"] as? String, "the zip is hashed as stored")
    }

    /// The existing gate also takes a directory (same walk); --json and --jsonl exclude each other.
    @Test func directoriesWorkForTheGateToo() throws {
        let r = try CLI.run(["check", CLI.repoRoot.appendingPathComponent("captures").path, "--json"])
        let doc = try CLI.json(r.stdout)
        let own = try CLI.allCaptures().filter { $0.hasPrefix(CLI.repoRoot.path) } + CLI.subdirectoryCaptures()
        #expect((doc["files"] as? [[String: Any]])?.count == own.count)
        #expect(try CLI.run(["check", "--json", "--jsonl", CLI.capture("healthy.btsnoop")]).status == 2)
        #expect(try CLI.run(["check", "--junit", "/dev/null", "--jsonl", CLI.capture("healthy.btsnoop")]).status == 2)
    }
}
