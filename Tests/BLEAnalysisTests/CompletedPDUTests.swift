import BLEAnalysis
import BLECapture
import BLEProtocol
import Foundation
import Testing

/// What `Analyzer.consume(_:pdu:)` hands over per frame, checked frame by frame against tshark: the
/// frame that completes each L2CAP PDU, its channel, and its ATT or SMP PDU decoded typed
/// (`CompletedPDU.att`, `.smp`), and every frame's verdict.
@Suite struct CompletedPDUTests {
    static let hasTshark = AnalysisFixtures.run("tshark", ["-v"]) != nil

    /// (frame, opcode) of every PDU tshark decodes under `filter`, from `field` (hex, a frame with
    /// several PDUs lists them comma-separated).
    static func tshark(_ path: String, _ filter: String, _ field: String) throws -> [String] {
        let out = try #require(AnalysisFixtures.run("tshark", ["-r", path, "-Y", filter, "-T", "fields", "-e", "frame.number", "-e", field]))
        return out.split(separator: "\n").flatMap { line -> [String] in
            let parts = line.split(separator: "\t")
            guard parts.count == 2 else { return [] }
            return parts[1].split(separator: ",").map { "\(parts[0]) \(Int($0.dropFirst(2), radix: 16) ?? -1)" }
        }
    }

    /// (frame, ATT opcode, SMP code) of every PDU handed over, and the malformed frames.
    static func ours(_ path: String) throws -> (att: [String], smp: [String], malformed: Int) {
        let analyzer = Analyzer()
        var att: [String] = [], smp: [String] = []
        var malformed = 0
        _ = try CaptureFile(path: path).read { frame in
            let analyzed = analyzer.consume(frame) { pdu in
                if let a = pdu.att { att.append("\(frame.number) \(a.opcode.rawValue)") }
                #expect((pdu.att != nil) == (pdu.attOpcode != nil && pdu.channel == 0x0004), "frame \(frame.number)")
                if let s = pdu.smp { smp.append("\(frame.number) \(s.code.rawValue)") }
            }
            #expect(analyzed.frame.number == frame.number)
            if analyzed.status.isMalformed { malformed += 1 }
        }
        #expect(malformed == analyzer.statistics.malformed)
        return (att, smp, malformed)
    }

    @Test(.enabled(if: hasTshark, "tshark is not installed"),
          arguments: ["healthy.btsnoop", "pairing_ok.btsnoop", "long_read_write.btsnoop", "mtu_truncated_notify.btsnoop"])
    func pdusAreTsharks(_ name: String) throws {
        let path = AnalysisFixtures.capture(name)
        let ours = try Self.ours(path)
        #expect(ours.att == (try Self.tshark(path, "btatt", "btatt.opcode")))
        #expect(ours.smp == (try Self.tshark(path, "btsmp", "btsmp.opcode")))
        #expect(!ours.att.isEmpty)
        #expect(ours.malformed == 0)
    }
}
