import BLEAnalysis
import BLECapture
import Foundation
import TestSupport
import Testing

/// `bleanalyze export`: every format converted to pcap link type 201 keeps every HCI packet, its
/// direction and timestamp; tshark reads the same frames and the same ATT PDUs.
@Suite struct ExportTests {
    /// HCI captures (export refuses air captures).
    static let inputs = RedactTests.inputs.filter { path in
        (try? CaptureFile(path: path)).map { !Datalink.isAirCapture($0.info.datalink) || $0.info.format == .btsnoop } ?? false
    }

    @Test(arguments: inputs)
    func everyHCIPacketIsExported(path: String) throws {
        let name = URL(fileURLWithPath: path).lastPathComponent
        let out = Fixtures.temporary("export-" + name + ".pcap")
        let summary = try CaptureExport.toPcap(input: path, output: out)
        let source = try CaptureFile(path: path).records()
        let exported = try CaptureFile(path: out)
        #expect(exported.info.format == .pcap)
        #expect(exported.info.datalink == 201)
        let copy = exported.records().records
        #expect(summary.written == copy.count, "\(name)")
        #expect(summary.written + summary.skipped.values.reduce(0, +) == source.records.count, "\(name)")
        let sourceHCI = source.records.filter { $0.kind.isHCI }
        let copyHCI = copy.filter { $0.kind.isHCI }
        #expect(copyHCI.count == sourceHCI.count, "\(name)")
        for (a, b) in zip(sourceHCI, copyHCI) {
            #expect(a.kind == b.kind && a.payload == b.payload && a.timestamp == b.timestamp, "\(name)")
            if a.direction != .unknown { #expect(a.direction == b.direction, "\(name)") }
        }
        // Same analysis: ATT counts equal (log records carry no ATT).
        let before = try AnalysisFacts(path), after = try AnalysisFacts(out)
        #expect(after.attOpcodes == before.attOpcodes, "\(name)")
    }

    /// tshark reads the exported file: its frame count equals ours, its ATT opcode counts equal ours.
    @Test(.enabled(if: Tool.available("tshark", ["-v"]), "tshark is not installed"), arguments: inputs)
    func tsharkAgrees(path: String) throws {
        let name = URL(fileURLWithPath: path).lastPathComponent
        let out = Fixtures.temporary("tshark-" + name + ".pcap")
        let summary = try CaptureExport.toPcap(input: path, output: out)
        // One tshark pass (its start-up is most of its cost): every frame is a line; the ATT PDUs are
        // those of `-Y "btatt && !(bthci_acl.chandle == 0x0edc)"`, the filter ATTCountTests uses.
        guard let fields = Fixtures.tool("tshark", ["-r", out, "-T", "fields", "-E", "occurrence=a",
                                                    "-e", "frame.number", "-e", "btatt.opcode", "-e", "bthci_acl.chandle"]) else {
            Issue.record("tshark cannot read \(out)"); return
        }
        let lines = fields.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == summary.written, "\(name)")
        var theirs = [Int](repeating: 0, count: 256)
        for line in lines {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard f.count == 3, !f[1].isEmpty, !f[2].split(separator: ",").contains("0x0edc") else { continue }
            for op in f[1].split(separator: ",") { if let v = Int(op.dropFirst(2), radix: 16) { theirs[v] += 1 } }
        }
        let ours = try AnalysisFacts(path).attOpcodes
        #expect(ours == theirs, "\(name): ATT opcode counts differ")
    }

    static let airCapture = Fixtures.repoRoot.deletingLastPathComponent()
        .appendingPathComponent("shared/captures/real/lell_phdr_connection_update.pcap").path

    @Test(.enabled(if: FileManager.default.fileExists(atPath: ExportTests.airCapture), "../shared/captures/real is absent"))
    func airCapturesAreRefused() throws {
        let air = Self.airCapture
        #expect(throws: CaptureError.self) { try CaptureExport.toPcap(input: air, output: Fixtures.temporary("air.pcap")) }
    }
}
