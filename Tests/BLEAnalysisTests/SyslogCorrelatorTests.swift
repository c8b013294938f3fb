import BLEAnalysis
import BLEBytes
import BLECapture
import BLEProtocol
import Foundation
import Testing

/// PacketLogger syslog lines (bluetoothd, CoreBluetooth) on the same timeline as the HCI traffic.
@Suite("Syslog correlation")
struct SyslogCorrelatorTests {
    static func syslog(_ message: String, process: String = "bluetoothd", level: UInt8 = 0) -> [UInt8] {
        var b: [UInt8] = [0x39, 0x30, 0, 0, level]   // PID 12345, little-endian (Wireshark packet-packetlogger.c)
        for s in [process, "CoreBluetooth", "com.apple.bluetooth", "Server.LE", message] { b += Array(s.utf8) + [0] }
        return b
    }

    /// healthy.btsnoop as an iOS PacketLogger log with syslog lines inserted around its connection.
    static func capture() throws -> (path: String, peer: BDAddr, handle: UInt16, connectTime: Int64, lastTime: Int64) {
        let source = AnalysisFixtures.capture("healthy.btsnoop")
        let records = try CaptureFile(path: source).records().records
        let (hci, _) = try AnalysisFixtures.analyze(source)
        let c = try #require(hci.session.connections.first)
        let peer = try #require(c.peerAddress)
        let connectTime = try #require(c.lifecycle.completeTime)
        let lastTime = try #require(records.last?.timestamp)
        var w = PacketLoggerWriter(bigEndian: false)
        var inserted = false
        for r in records {
            if !inserted, r.timestamp > connectTime {
                // Three lines between the Connection Complete and the next record, in time order.
                let step = (r.timestamp - connectTime) / 4
                w.append(RecordToWrite(timestamp: connectTime + step, direction: .unknown, kind: .syslog,
                                       payload: syslog("Connection to \(peer.description.lowercased()) established, starting discovery")))
                w.append(RecordToWrite(timestamp: connectTime + 2 * step, direction: .unknown, kind: .syslog,
                                       payload: syslog("LE link handle 0x\(String(c.handle, radix: 16, uppercase: false)) MTU request queued")))
                w.append(RecordToWrite(timestamp: connectTime + 3 * step, direction: .unknown, kind: .syslog,
                                       payload: syslog("Scanning stopped", process: "MyApp")))
                inserted = true
            }
            w.append(r)
        }
        // Garbage and short syslog records never trap.
        w.append(RecordToWrite(timestamp: lastTime + 1, direction: .unknown, kind: .syslog, payload: [1, 2]))
        w.append(RecordToWrite(timestamp: lastTime + 2, direction: .unknown, kind: .syslog, payload: [1, 2, 3, 4, 5, 0xFF, 0xFE]))
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bleanalyze-syslog-tests-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("healthy-with-syslog-\(UUID().uuidString).pklg").path   // one per test: they run in parallel
        try Data(w.bytes).write(to: URL(fileURLWithPath: path))
        return (path, peer, c.handle, connectTime, lastTime)
    }

    @Test("lines naming the peer address or the handle join that connection's timeline, in time order")
    func attached() throws {
        let (path, _, _, _, _) = try Self.capture()
        let (a, _) = try AnalysisFixtures.analyze(path)
        let c = try #require(a.session.connections.first)
        #expect(a.syslog.total == 4)   // three lines + one record with strings; the 2-byte one is not a line
        let lines = a.syslog.attached[c.index] ?? []
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { $0.connectionIndex == c.index && $0.process == "bluetoothd" && $0.subsystem == "com.apple.bluetooth" })
        let logEvents = c.timeline.filter { if case .log = $0.fact { true } else { false } }
        #expect(logEvents.count == 2)
        #expect(logEvents.first?.freeText?.contains("established") == true)
        // Timeline order is by time: each log line sits between the HCI events around it.
        #expect(c.timeline.map(\.time) == c.timeline.map(\.time).sorted())
    }

    @Test("for a finding's time and connection: the nearest preceding lines, newest last")
    func nearestPreceding() throws {
        let (path, _, _, _, lastTime) = try Self.capture()
        let (a, _) = try AnalysisFixtures.analyze(path)
        let c = try #require(a.session.connections.first)
        let logged = try #require(a.syslog.attached[c.index]?.last)
        let hits = a.syslog.lines(before: logged.time + 3_000, connection: c.index, limit: 2)
        #expect(hits.count == 2)
        #expect(hits.last?.process == "MyApp")          // unattached, but logged just before
        #expect(hits.first?.message.description.contains("MTU") == true)
        let only = a.syslog.lines(before: logged.time + 3_000, connection: c.index, limit: 5, includeUnattached: false)
        #expect(only.count == 2 && only.allSatisfy { $0.connectionIndex == c.index })
        #expect(a.syslog.lines(before: logged.time - 10_000_000, connection: c.index).isEmpty)
        let finding = Finding(rule: "test.rule", severity: .warning, connection: c, time: logged.time + 3_000, frames: [1], message: "stall")
        let context = a.syslog.context(for: finding, limit: 1)
        let app = try #require(a.syslog.recent.first { $0.process == "MyApp" })
        #expect(context.count == 1 && context[0].line.process == "MyApp" && context[0].before == finding.time - app.time)
        _ = lastTime
    }

    @Test("addresses and handles are found in free text, not inside UUIDs or longer hex runs")
    func mentions() throws {
        let (path, peer, handle, _, _) = try Self.capture()
        let (a, _) = try AnalysisFixtures.analyze(path)
        _ = a
        let texts: [(String, Bool)] = [
            ("didConnect \(peer)", true),
            ("peer=\(peer.description.replacingOccurrences(of: ":", with: "-"))!", true),
            ("UUID 12345678-\(peer.description.replacingOccurrences(of: ":", with: ""))-aa", false),
            ("0a:\(peer)", false),
        ]
        for (text, expected) in texts {
            let file = try Self.single(text)
            let (b, _) = try AnalysisFixtures.analyze(file)
            #expect((b.syslog.attachedCount == 1) == expected, "\(text)")
        }
        _ = handle
    }

    /// healthy.btsnoop with one syslog line right after its Connection Complete.
    static func single(_ text: String) throws -> String {
        let source = AnalysisFixtures.capture("healthy.btsnoop")
        let records = try CaptureFile(path: source).records().records
        let (hci, _) = try AnalysisFixtures.analyze(source)
        let connectTime = try #require(hci.session.connections.first?.lifecycle.completeTime)
        var w = PacketLoggerWriter(bigEndian: true)
        var inserted = false
        for r in records {
            if !inserted, r.timestamp > connectTime {
                w.append(RecordToWrite(timestamp: connectTime, direction: .unknown, kind: .syslog, payload: syslog(text)))
                inserted = true
            }
            w.append(r)
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bleanalyze-syslog-tests-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("single-\(abs(text.hashValue)).pklg").path
        try Data(w.bytes).write(to: URL(fileURLWithPath: path))
        return path
    }
}
