import TestSupport
import BLEAnalysis
import BLECapture
import BLEProtocol
import Foundation
import Testing

/// Paths, generated inputs and subprocess helpers for the fuzz-regression, redaction and export tests.
enum Fixtures {
    static let repoRoot: URL = Repo.root

    static let regressions = repoRoot.appendingPathComponent("Tests/Fixtures/fuzz-regressions")

    static let temporaryDirectory: URL = {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bleanalyze-redact-tests-\(getpid())")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }()

    static func temporary(_ name: String) -> String { temporaryDirectory.appendingPathComponent(name).path }

    static func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = temporary(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The project's captures (`captures/`), every format the readers take.
    static let projectCaptures: [String] = {
        let dir = repoRoot.appendingPathComponent("captures")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.filter { n in [".btsnoop", ".pcap", ".pcapng", ".gz", ".pklg"].contains { n.hasSuffix($0) } }
            .sorted().map { dir.appendingPathComponent($0).path }
    }()

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

    /// A binary built by SwiftPM next to the test bundle, or in `.build/debug`.
    static func binary(_ name: String) -> String {
        let bundleDir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [bundleDir.appendingPathComponent(name), bundleDir.deletingLastPathComponent().appendingPathComponent(name),
                          repoRoot.appendingPathComponent(".build/debug/\(name)")]
        where FileManager.default.isExecutableFile(atPath: candidate.path) {
            return candidate.path
        }
        return repoRoot.appendingPathComponent(".build/debug/\(name)").path
    }

    struct RunResult {
        var status: Int32
        var signaled: Bool
        var stdout: String
        var stderr: String
        var seconds: Double
    }

    /// Runs `executable` (a path) with `arguments`; `shell` wraps it in `/bin/sh -c` (for `ulimit`).
    static func run(_ executable: String, _ arguments: [String], limitVirtualKB: Int? = nil) throws -> RunResult {
        let p = Process()
        if let limit = limitVirtualKB {
            p.executableURL = URL(fileURLWithPath: "/bin/sh")
            let quoted = ([executable] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
            p.arguments = ["-c", "ulimit -v \(limit); exec \(quoted)"]
        } else {
            p.executableURL = URL(fileURLWithPath: executable)
            p.arguments = arguments
        }
        let errURL = temporaryDirectory.appendingPathComponent("stderr-\(UInt64.random(in: 0...UInt64.max))")
        FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let err = try FileHandle(forWritingTo: errURL)
        defer { try? FileManager.default.removeItem(at: errURL) }
        let out = Pipe()
        p.standardOutput = out
        p.standardError = err
        let start = Date()
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        try err.close()
        let errData = (try? Data(contentsOf: errURL)) ?? Data()
        return RunResult(status: p.terminationStatus, signaled: p.terminationReason == .uncaughtSignal,
                         stdout: String(decoding: data, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self),
                         seconds: Date().timeIntervalSince(start))
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
