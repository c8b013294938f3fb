import BLECapture
import TestSupport
import Foundation
import Testing

/// `bleanalyze CMD -`: the capture comes from standard input, through a real pipe (or `< file`),
/// and every command prints what it prints for the file itself.
@Suite struct StandardInputTests {
    static let name = "(standard input)"

    /// The same output from the path and from a pipe, for every command that takes FILE; where the
    /// output names the file, the pipe's names standard input instead.
    @Test func everyCommandReadsAPipe() throws {
        let path = CLI.capture("healthy.btsnoop")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        // (command, options after FILE); no command is the report.
        let commands: [([String], [String])] = [([], []), ([], ["--json"]), (["info"], []), (["info"], ["--json"]),
                                                (["packets"], []), (["packets"], ["--json"]), (["timeline"], ["--json"]),
                                                (["gatt"], []), (["adv"], ["--json"])]
        for (sub, options) in commands {
            let command = sub + options
            let fromFile = try CLI.run(sub + [path] + options)
            let fromPipe = try CLI.run(sub + ["-"] + options, stdin: .pipe(bytes))
            #expect(fromFile.status == 0 && fromPipe.status == 0, "\(command): \(fromPipe.stderr)")
            #expect(!fromFile.stdout.isEmpty)
            let expected = fromFile.stdout.replacingOccurrences(of: path, with: Self.name)
                .replacingOccurrences(of: path.replacingOccurrences(of: "/", with: "\\/"), with: Self.name)
            #expect(fromPipe.stdout == expected, "\(command)")
        }
    }

    /// gzip is detected from the bytes on standard input too: the project's gzip-compressed copy of
    /// healthy.btsnoop gives the frames of the plain file.
    @Test func gzipOnStandardInput() throws {
        let gz = try Data(contentsOf: URL(fileURLWithPath: CLI.capture("healthy.btsnoop.gz")))
        let r = try CLI.run(["info", "-", "--json"], stdin: .pipe(gz))
        #expect(r.status == 0, "\(r.stderr)")
        let j = try CLI.json(r.stdout)
        let plain = try CLI.json(try CLI.run(["info", CLI.capture("healthy.btsnoop"), "--json"]).stdout)
        #expect(j["compressed"] as? Bool == true)
        #expect(j["frames"] as? Int == plain["frames"] as? Int)
        #expect(j["file"] as? String == Self.name)
    }

    /// An Android bugreport zip (written here with libarchive) on standard input: the HCI log inside
    /// is found and analyzed, as for the zip on disk.
    @Test func bugreportZipOnStandardInput() throws {
        let log = CLI.capture("healthy.btsnoop")
        var zip = FieldLogArchiveWriter(format: .zip)
        zip.add("bugreport-sdk_gphone64-UE1A-2024-01-01-10-00-00.txt", text: "== dumpstate ==\n")
        zip.add("FS/data/misc/bluetooth/logs/btsnoop_hci.log", try Array(Data(contentsOf: URL(fileURLWithPath: log))))
        let path = try CLI.temporaryFile("bugreport-stdin.zip", [])
        try zip.write(to: path)
        let r = try CLI.run(["info", "-", "--json"], stdin: .pipe(try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(r.status == 0, "\(r.stderr)")
        let plain = try CLI.json(try CLI.run(["info", log, "--json"]).stdout)
        #expect(try CLI.json(r.stdout)["frames"] as? Int == plain["frames"] as? Int)
        let text = try CLI.run(["info", "-"], stdin: .pipe(try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(text.stdout.contains("FS/data/misc/bluetooth/logs/btsnoop_hci.log"), "\(text.stdout)")
    }

    /// A 2.1 MB pcapng (more than one 1 MiB copy buffer, read through libpcap from the copy) from a
    /// pipe, and the same file redirected with `<`, count the frames tshark counts.
    @Test(.enabled(if: CLI.sharedReal != nil, "../shared/captures/real is absent"),
          .enabled(if: CLI.tool("tshark", ["-v"]), "tshark is not installed"))
    func largePcapngFromAPipeAndARedirect() throws {
        let path = try #require(CLI.sharedReal).appendingPathComponent("nrf_sniffer_surplife_led_long.pcapng").path
        let tsharkFrames = try #require(Tool.run("tshark", ["-r", path, "-T", "fields", "-e", "frame.number"]))
            .split(separator: "\n").count
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(bytes.count > 2 << 20)
        for input in [CLI.Input.pipe(bytes), .file(path)] {
            let r = try CLI.run(["info", "-", "--json"], stdin: input)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(try CLI.json(r.stdout)["frames"] as? Int == tsharkFrames)
        }
    }

    /// The HTML report from a pipe is the file's page, named standard input.
    @Test func htmlReportFromAPipe() throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: CLI.capture("mtu_truncated_read.btsnoop")))
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("bleanalyze-stdin-\(getpid()).html").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let r = try CLI.run(["-", "-o", out], stdin: .pipe(bytes))
        #expect(r.status == 0, "\(r.stderr)")
        let fromPipe = try String(contentsOfFile: out, encoding: .utf8)
        let direct = try CLI.run([CLI.capture("mtu_truncated_read.btsnoop"), "-o", out])
        #expect(direct.status == 0)
        let fromFile = try String(contentsOfFile: out, encoding: .utf8)
        #expect(fromPipe.contains("mtu.truncated-read"))
        // The page names the file by its path and its base name; the pipe's page names standard input.
        #expect(fromPipe.replacingOccurrences(of: Self.name, with: "") ==
                fromFile.replacingOccurrences(of: CLI.capture("mtu_truncated_read.btsnoop"), with: "")
                    .replacingOccurrences(of: "mtu_truncated_read.btsnoop", with: ""))
    }

    /// Bad input on standard input fails as a bad file does: exit 2, the reason, named standard input.
    @Test func badInputOnStandardInput() throws {
        let empty = try CLI.run(["info", "-"], stdin: .pipe(Data()))
        #expect(empty.status == 2)
        #expect(empty.stderr.contains("\(Self.name): empty file"), "\(empty.stderr)")
        let text = try CLI.run(["packets", "-"], stdin: .pipe(Data("hello, not a capture\n".utf8)))
        #expect(text.status == 2)
        #expect(text.stderr.contains("\(Self.name): not a capture"), "\(text.stderr)")
        #expect(text.stderr.contains("offset"))
        // A capture cut inside a record: read, exit 0, the cut reported against standard input.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: CLI.capture("healthy.btsnoop")))
        let cut = try CLI.run(["info", "-", "--json"], stdin: .pipe(bytes.dropLast(3)))
        #expect(cut.status == 0)
        #expect(try CLI.json(cut.stdout)["truncated"] as? Bool == true)
        #expect(cut.stderr.contains(Self.name))
    }
}
