import BLEAnalysis
import BLECapture
import Foundation
import TestSupport
import Testing

/// ATT PDU counts per opcode equal tshark's (`-Y btatt -T fields -e btatt.opcode`) on every capture,
/// when tshark is installed. A reassembled PDU counts once, as tshark shows it once. ATT-looking
/// records on the Qualcomm debug handle 0x0EDC are not counted on either side.
@Suite struct ATTCountTests {
    @Test(.enabled(if: Tool.available("tshark", ["-v"]), "tshark is not installed"))
    func attOpcodeCountsMatchTshark() throws {
        var checked = 0
        for path in try AnalysisFixtures.allCaptures() {
            // Handle 0x0EDC carries Qualcomm controller debug records, not a link (SessionModel.qualcommDebugHandle);
            // tshark decodes some of them as ATT.
            guard let out = AnalysisFixtures.run("tshark", ["-r", path, "-Y", "btatt && !(bthci_acl.chandle == 0x0edc)", "-T", "fields", "-e", "btatt.opcode"]) else {
                Issue.record("tshark failed on \(path)"); continue
            }
            var theirs = [Int](repeating: 0, count: 256)
            for line in out.split(separator: "\n") {
                // One line per frame; a frame with several ATT PDUs lists them comma-separated.
                for op in line.split(separator: ",") {
                    if let v = Int(op.dropFirst(2), radix: 16) { theirs[v] += 1 }
                }
            }
            let (analyzer, _, info) = try AnalysisFixtures.analyzeWithInfo(path)
            let ours = analyzer.statistics.attOpcodes
            // Air captures: tshark also counts retransmitted PDUs; AirCaptureTests compares them with those added.
            if info.notDecodedReason != nil || Datalink.isAirCapture(info.datalink) { continue }
            #expect(ours == theirs, "\(path): ours \(Self.nonZero(ours)) tshark \(Self.nonZero(theirs))")
            checked += 1
        }
        #expect(checked >= 10)
    }

    static func nonZero(_ a: [Int]) -> [String: Int] {
        var d: [String: Int] = [:]
        for (i, n) in a.enumerated() where n > 0 { d[String(format: "0x%02x", i)] = n }
        return d
    }
}
