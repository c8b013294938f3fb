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
            // Air captures: `airATTOpcodeCountsMatchTshark`.
            if info.notDecodedReason != nil || Datalink.isAirCapture(info.datalink) { continue }
            #expect(ours == theirs, "\(path): ours \(Self.nonZero(ours)) tshark \(Self.nonZero(theirs))")
            checked += 1
        }
        #expect(checked >= 10)
    }

    /// Air captures: tshark counts every copy of a retransmitted PDU, we feed one and count the copies
    /// (`air.retransmittedATTOpcodes`). tshark dissects packets whose CRC is bad (the PHDR or Nordic header
    /// says so, or its own check), which we drop: those are left out of its side. tshark's btle takes a
    /// PDU for a retransmission on its SN alone (idealled frame 3623: the sniffer missed event 580, the
    /// new start fragment has the SN of the last PDU seen, other bytes): it then drops the reassembly and
    /// marks the continuations "Missing Fragment Start". An ATT PDU we complete in such a frame is added to
    /// its side; every other difference fails.
    @Test(.enabled(if: Tool.available("tshark", ["-v"]), "tshark is not installed"))
    func airATTOpcodeCountsMatchTshark() throws {
        var checked = 0
        for path in try AnalysisFixtures.allCaptures() {
            let file = try CaptureFile(path: path)
            guard Datalink.isAirCapture(file.info.datalink), file.info.notDecodedReason == nil else { continue }
            let analyzer = Analyzer()
            var completedIn: [Int: [Int]] = [:]   // frame → ATT opcodes we counted there
            var before = analyzer.statistics.attOpcodes
            _ = file.read { f in
                analyzer.consume(f)
                let now = analyzer.statistics.attOpcodes
                if now != before {
                    for op in 0..<256 where now[op] > before[op] { completedIn[f.number, default: []].append(op) }
                    before = now
                }
            }
            guard let out = AnalysisFixtures.run("tshark", ["-r", path, "-Y", "btatt && !btle.crc.incorrect && !(nordic_ble.crcok == 0)",
                                                            "-T", "fields", "-e", "btatt.opcode"]),
                  let dropped = AnalysisFixtures.run("tshark", ["-r", path, "-Y", "_ws.expert.message == \"Missing Fragment Start\"",
                                                                "-T", "fields", "-e", "frame.number"]) else {
                Issue.record("tshark failed on \(path)"); continue
            }
            var theirs = [Int](repeating: 0, count: 256)
            for line in out.split(separator: "\n") {
                for op in line.split(separator: ",") { if let v = Int(op.dropFirst(2), radix: 16) { theirs[v] += 1 } }
            }
            for frame in dropped.split(separator: "\n").compactMap({ Int($0) }) {
                for op in completedIn[frame] ?? [] { theirs[op] += 1 }
            }
            let ours = zip(analyzer.statistics.attOpcodes, analyzer.air.retransmittedATTOpcodes).map { $0 + $1 }
            #expect(ours == theirs, "\(path): ours \(Self.nonZero(ours)) tshark \(Self.nonZero(theirs))")
            checked += 1
        }
        if AnalysisFixtures.sharedReal != nil { #expect(checked >= 8) }
    }

    static func nonZero(_ a: [Int]) -> [String: Int] {
        var d: [String: Int] = [:]
        for (i, n) in a.enumerated() where n > 0 { d[String(format: "0x%02x", i)] = n }
        return d
    }
}
