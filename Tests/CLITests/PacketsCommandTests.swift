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
            for (i, line) in lines.enumerated() {
                let o = try CLI.json(String(line))
                #expect(o["frame"] as? Int == i + 1)
                #expect(o["timestamp"] is Int)
                #expect(["sent", "received", "unknown"].contains(o["direction"] as? String ?? ""))
                #expect(o["type"] is String)
                #expect(o["summary"] is String)
                if o["malformed"] as? Bool == true {
                    malformed += 1
                    #expect(o["reason"] is String)
                    #expect(o["errorOffset"] is Int)
                }
            }
            #expect(malformed == info["malformed"] as? Int, "\(path): packets and info agree on malformed frames")
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
}
