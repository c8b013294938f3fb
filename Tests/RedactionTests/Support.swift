import TestSupport
import BLEAnalysis
import BLECapture
import BLEProtocol
import Foundation
import Testing

/// Paths, generated inputs and subprocess helpers for the redaction and export tests.
enum Fixtures {
    static let repoRoot: URL = Repo.root

    static let temporaryDirectory: URL = Built.scratch("redact-tests")

    static func temporary(_ name: String) -> String { temporaryDirectory.appendingPathComponent(name).path }

    static func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = temporary(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    static let projectCaptures = Built.projectCaptures

    /// `../shared/captures/real/` when present (HCI and LE air captures).
    static let realCaptures: [String] = Repo.realCaptures()

    /// Formats the project has no capture of, made from `healthy.btsnoop` and `pairing_ok.btsnoop`:
    /// PacketLogger in both byte orders (with syslog records), pcapng with ns and 2^-10 s
    /// resolution, btsnoop monitor (2001) with user logging and a New Index record.
    static let generatedCaptures: [String] = {
        var out: [String] = []
        var records: [RecordToWrite] = []
        for name in ["healthy.btsnoop", "pairing_ok.btsnoop"] {
            if let file = try? CaptureFile(path: repoRoot.appendingPathComponent("captures/\(name)").path) {
                records += file.records().records
            }
        }
        guard !records.isEmpty else { return [] }
        let syslog: [UInt8] = [0x39, 0x05, 0, 0, 0x03] + Array("bluetoothd\0com.apple.bluetooth\0Server.LE\0Connection\0Connected to C0:11:22:33:44:02 \"bleanalyze-hr\"\0".utf8)
        for bigEndian in [false, true] {
            var w = PacketLoggerWriter(bigEndian: bigEndian)
            for (i, r) in records.enumerated() {
                w.append(r)
                if i % 40 == 0 { w.append(RecordToWrite(timestamp: r.timestamp, direction: .unknown, kind: .syslog, payload: syslog)) }
            }
            if let p = try? write("generated-\(bigEndian ? "be" : "le").pklg", w.bytes) { out.append(p) }
        }
        for tsresol: UInt8 in [9, 0x8A] {
            var w = PcapngWriter(linkType: UInt16(Datalink.pcapH4WithPHDR), tsresol: tsresol)
            for r in records {
                let indicator: UInt8 = r.kind == .command ? 1 : r.kind == .aclData ? 2 : r.kind == .event ? 4 : 3
                w.append(micros: r.timestamp, data: [0, 0, 0, r.direction == .received ? 1 : 0, indicator] + r.payload,
                         originalLength: (r.originalLength ?? r.payload.count) + 5)
            }
            if let p = try? write("generated-tsresol-\(tsresol).pcapng", w.bytes) { out.append(p) }
        }
        var m = BTSnoopWriter(datalink: Datalink.btsnoopMonitor)
        m.append(RecordToWrite(timestamp: records[0].timestamp, direction: .unknown, kind: .indexNew, adapter: 0,
                               payload: [0, 1, 0x01, 0x44, 0x33, 0x22, 0x11, 0x00] + Array("hci0\0\0\0\0".utf8)))
        for (i, r) in records.enumerated() {
            m.append(r)
            if i % 50 == 0 {
                m.append(RecordToWrite(timestamp: r.timestamp, direction: .unknown, kind: .userLogging, adapter: 0xFFFF,
                                       payload: [6, 11] + Array("bluetoothd\0".utf8) + Array("src/device.c:device_connect() 00:11:22:33:44:01\0".utf8)))
            }
        }
        if let p = try? write("generated-monitor.btsnoop", m.bytes) { out.append(p) }
        return out
    }()

    static var allCaptures: [String] { projectCaptures + realCaptures + generatedCaptures }

    static func binary(_ name: String) -> String { Built.binary(name) }

    typealias RunResult = Built.RunResult

    static func run(_ executable: String, _ arguments: [String], limitVirtualKB: Int? = nil) throws -> RunResult {
        try Built.run(executable, arguments, limitVirtualKB: limitVirtualKB, scratch: temporaryDirectory)
    }

    /// Runs a tool found on PATH; nil when it is not installed or fails.
    static func tool(_ executable: String, _ arguments: [String]) -> String? { Tool.run(executable, arguments) }
}

/// One analysis pass with detectors, reduced to what redaction must keep.
struct AnalysisFacts {
    struct FindingKey: Hashable, CustomStringConvertible {
        var rule: String
        var severity: String
        var connection: UInt16?
        var frames: [Int]
        var description: String { "\(rule) (\(severity)) conn \(connection.map(String.init) ?? "-") frames \(frames)" }
    }

    var info: CaptureInfo
    var summary: ReadSummary
    var findings: Set<FindingKey>
    var attOpcodes: [Int]
    var malformed: Int
    var peerAddresses: [BDAddr?]
    var advertiserAddresses: [BDAddr]
    var advertiserNames: [String]

    init(_ path: String) throws {
        let file = try CaptureFile(path: path)
        let analyzer = Analyzer(detect: true)
        summary = file.read { analyzer.consume($0) }
        info = file.info
        findings = Set(analyzer.finish().map { FindingKey(rule: $0.rule, severity: "\($0.severity)", connection: $0.connection, frames: $0.frames) })
        attOpcodes = analyzer.statistics.attOpcodes
        malformed = analyzer.statistics.malformed
        peerAddresses = analyzer.session.connections.map(\.peerAddress)
        let advertisers = analyzer.session.advertisers
        advertiserAddresses = advertisers.all.map(\.address)
        advertiserNames = advertisers.all.flatMap(\.names)
    }
}

extension Array where Element == UInt8 {
    /// True when `pattern` occurs in the bytes.
    func contains(bytes pattern: [UInt8]) -> Bool {
        guard !pattern.isEmpty, pattern.count <= count else { return false }
        let first = pattern[0]
        var i = 0
        let last = count - pattern.count
        while i <= last {
            if self[i] == first, self[i ..< i + pattern.count].elementsEqual(pattern) { return true }
            i += 1
        }
        return false
    }
}

extension BDAddr {
    /// The address as it appears on the wire (little-endian).
    var wireBytes: [UInt8] { (0..<6).map { UInt8(truncatingIfNeeded: value >> UInt64(8 * $0)) } }
}
