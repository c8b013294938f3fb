import TestSupport
import Foundation
import Testing

/// `bleanalyze packets`: runs to the end on every capture; `--json` is one valid object per frame.
@Suite struct PacketsCommandTests {
    @Test func packetsRunsOnEveryCapture() throws {
        for path in try CLI.allCaptures() {
            let text = try CLI.run(["packets", path])
            #expect(text.status == 0, "\(path): \(text.stderr)")
            let info = try CLI.json(try CLI.run(["info", path, "--json"]).stdout)
            let frames = info["frames"] as? Int ?? -1
            let json = try CLI.run(["packets", path, "--json"])
            #expect(json.status == 0)
            let lines = json.stdout.split(separator: "\n")
            #expect(lines.count == frames, "\(path)")
            var malformed = 0
            // The text list (rendered on a second thread) shows every frame once, in order, and the
            // raw bytes of malformed and capture-truncated frames as JSON Lines give them.
            // `@` is BlueZ management traffic; `[hciN]` is left out for records of no controller.
            let titles = text.stdout.split(separator: "\n").filter { "<>=*@".contains($0.first ?? " ") }
            #expect(titles.count == frames, "\(path): one title line per frame")
            #expect(titles.last.map { $0.contains("#\(frames) ") } ?? (frames == 0), "\(path)")
            // Lines whose fields are wrong, recorded once per capture (not five `#expect`s per frame
            // of the whole corpus).
            var wrong: [String] = []
            for (i, line) in lines.enumerated() {
                let o = try CLI.json(String(line))
                if !(o["frame"] as? Int == i + 1 && o["timestamp"] is Int && o["type"] is String && o["summary"] is String
                     && ["sent", "received", "unknown"].contains(o["direction"] as? String ?? "")) {
                    wrong.append(String(line.prefix(200)))
                }
                if o["malformed"] as? Bool == true {
                    malformed += 1
                    #expect(o["reason"] is String)
                    #expect(o["errorOffset"] is Int)
                    let raw = o["raw"] as? String ?? ""
                    let firstRow = stride(from: 0, to: min(raw.count, 32), by: 2).map { k -> String in
                        let a = raw.index(raw.startIndex, offsetBy: k)
                        return String(raw[a ..< raw.index(a, offsetBy: 2)])
                    }.joined(separator: " ")
                    #expect(text.stdout.contains("* Malformed frame \(i + 1): \(o["reason"] as? String ?? "")"), "\(path) #\(i + 1)")
                    #expect(raw.isEmpty || text.stdout.contains("\n        \(firstRow)\n"), "\(path) #\(i + 1): raw bytes shown")
                }
                if o["captureTruncated"] as? Bool == true {
                    #expect(text.stdout.contains("Note: capture kept \(o["length"] as? Int ?? -1) of \(o["originalLength"] as? Int ?? -1) bytes"),
                            "\(path) #\(i + 1)")
                }
            }
            #expect(wrong.isEmpty, "\(path): \(wrong.count) lines without frame (in order), timestamp, direction, type or summary: \(wrong.prefix(3))")
            #expect(malformed == info["malformed"] as? Int, "\(path): packets and info agree on malformed frames")
        }
    }

    /// Without a filter, the rendering thread decodes the frames' own layers (all but ACL data); with
    /// one, the reading thread decodes everything so that the filter can read it. `--since 0`
    /// keeps every frame, so both ways must print the same text.
    @Test func splitDecodingPrintsWhatOneThreadPrints() throws {
        for path in try CLI.allCaptures() {
            let split = try CLI.run(["packets", path])
            let oneThread = try CLI.run(["packets", path, "--since", "0"])
            #expect(split.status == oneThread.status)
            #expect(split.stdout == oneThread.stdout, "\(path)")
        }
    }

    /// Key material is shortened unless --show-keys.
    @Test func keysAreShortenedByDefault() throws {
        let path = CLI.capture("pairing_ok.btsnoop")
        let short = try CLI.run(["packets", path]).stdout
        let full = try CLI.run(["packets", path, "--show-keys"]).stdout
        #expect(short.contains("--show-keys to print"))
        #expect(!full.contains("--show-keys to print"))
    }

    @Test func upperLayersAreShown() throws {
        let out = try CLI.run(["packets", CLI.capture("healthy.btsnoop")]).stdout
        #expect(out.contains("ATT: Exchange MTU Request"))
        #expect(out.contains("Heart Rate Measurement (0x2A37) @0x0010"))
        #expect(out.contains("HCI Event: Disconnect Complete"))
    }

    /// An air capture's ATT PDU is shown with the direction the link layer gives it, so the handle
    /// of a peripheral's Error Response is named from the peripheral's database. lell frame 231:
    /// Peripheral → Central, Error Response to Read By Type for handle 0x002F, which tshark names
    /// from the discovery in frames 224–227 (characteristic value handle 0x002F, UUID 0xFFF5).
    @Test(.enabled(if: CLI.sharedReal != nil && CLI.tool("tshark", ["--version"]), "needs ../shared/captures/real and tshark"))
    func airPDUsAreNamedFromTheSendersDatabase() throws {
        let capture = try #require(CLI.sharedReal).appendingPathComponent("lell_phdr_connection_update.pcap").path
        let tshark = try #require(Tool.run("tshark", ["-r", capture, "-Y", "frame.number==231", "-V"]))
        #expect(tshark.contains("Handle in Error: 0x002f") && tshark.contains("(0xfff5)"))
        let ours = try CLI.run(["packets", capture, "--frame", "231"]).stdout
        #expect(ours.contains("Error Response"))
        #expect(ours.contains("Attribute: 0xFFF5 @0x002F"))
    }
}
