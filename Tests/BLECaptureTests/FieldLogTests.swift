import BLECapture
import Foundation
import Testing

/// Field logs as users receive them: Android bugreport zips and btsnooz summaries, sysdiagnose
/// tar.gz and zips holding PacketLogger logs. Fixtures are built here from the project's captures.
@Suite("Field logs")
struct FieldLogTests {
    static let source = CaptureTestPaths.capture("healthy.btsnoop")
    static let second = CaptureTestPaths.capture("long_read_write.btsnoop")
    static let third = CaptureTestPaths.capture("pairing_ok.btsnoop")

    static func records(_ path: String) throws -> [RecordToWrite] { try CaptureFile(path: path).records().records }

    static func frames(_ path: String) throws -> (frames: [(kind: FrameKind, direction: Direction, payload: [UInt8], originalLength: Int, timestamp: Int64)], info: CaptureInfo, summary: ReadSummary) {
        let file = try CaptureFile(path: path)
        var out: [(FrameKind, Direction, [UInt8], Int, Int64)] = []
        let summary = file.read { f in out.append((f.kind, f.direction, Array(f.payload), f.originalLength, f.timestamp)) }
        return (out.map { ($0.0, $0.1, $0.2, $0.3, $0.4) }, file.info, summary)
    }

    static func expectSame(_ got: [(kind: FrameKind, direction: Direction, payload: [UInt8], originalLength: Int, timestamp: Int64)],
                           _ want: [(kind: FrameKind, direction: Direction, payload: [UInt8], originalLength: Int, timestamp: Int64)],
                           sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(got.count == want.count, sourceLocation: sourceLocation)
        for (i, (g, w)) in zip(got, want).enumerated() {
            guard g.kind == w.kind, g.direction == w.direction, g.payload == w.payload, g.originalLength == w.originalLength,
                  g.timestamp == w.timestamp else {
                let message = "frame \(i + 1): got \(g.kind.name) \(g.direction.name) \(g.payload.count)/\(g.originalLength)B @\(g.timestamp), "
                    + "want \(w.kind.name) \(w.direction.name) \(w.payload.count)/\(w.originalLength)B @\(w.timestamp)"
                Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
                return
            }
        }
    }

    static func whole(_ records: [RecordToWrite]) -> [(kind: FrameKind, direction: Direction, payload: [UInt8], originalLength: Int, timestamp: Int64)] {
        records.map { ($0.kind, $0.direction, $0.payload, $0.originalLength ?? $0.payload.count, $0.timestamp) }
    }

    // MARK: btsnooz

    @Test("btsnooz text (v1 and v2) decodes to the original frames, ACL cut to 14 bytes", arguments: [UInt8(1), 2])
    func btsnoozText(version: UInt8) throws {
        let records = try Self.records(Self.source)
        let text = BtsnoozEncoder.dumpstate(BtsnoozEncoder.encode(records, version: version))
        let path = try CaptureTestPaths.temporaryFile("dumpsys-v\(version).txt", Array(text.utf8))
        let (got, info, summary) = try Self.frames(path)
        Self.expectSame(got, BtsnoozEncoder.expected(records))
        #expect(info.format == .btsnoop)
        #expect(info.fieldLog?.container == .text)
        #expect(info.fieldLog?.member.kind == .btsnooz)
        #expect(summary.issues.isEmpty)
        // Some ACL frames really are cut, and they are marked capture-truncated, not malformed.
        #expect(got.contains { $0.kind == .aclData && $0.payload.count == 14 && $0.originalLength > 14 })
    }

    @Test("btsnooz: layout facts (little-endian, length counts the type byte, deltas from the previous record)")
    func btsnoozLayout() throws {
        // v2 records: event (2 bytes + type) at t-10, command at t (delta 10 µs).
        var body: [UInt8] = [0x03, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x0e, 0x00]
        body += [0x04, 0x00, 0x04, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x20, 0x03, 0x0c, 0x00]
        let last: Int64 = 1_700_000_000_000_000
        var snooz: [UInt8] = [2]
        withUnsafeBytes(of: UInt64(last).littleEndian) { snooz += $0 }
        snooz += ZlibStream.deflate(body)
        let log = try Btsnooz.decode(snooz: snooz)
        #expect(log.records.count == 2)
        #expect(log.records[0] == .init(type: 0x10, timestamp: last - 10, payload: [0x0e, 0x00], originalLength: 2))
        #expect(log.records[1] == .init(type: 0x20, timestamp: last, payload: [0x03, 0x0c, 0x00], originalLength: 3))
        #expect(log.problem == nil)
    }

    @Test("btsnooz: every prefix and damaged streams decode partially or fail cleanly")
    func btsnoozRobust() throws {
        let records = Array(try Self.records(Self.source).prefix(40))
        let snooz = BtsnoozEncoder.encode(records)
        for n in 0 ..< snooz.count {
            if let log = try? Btsnooz.decode(snooz: Array(snooz.prefix(n))) { #expect(log.records.count <= records.count) }
        }
        var damaged = snooz
        for i in stride(from: 20, to: damaged.count, by: 7) { damaged[i] ^= 0x5A }
        _ = try? Btsnooz.decode(snooz: damaged)
        // Garbage instead of base64, and a BEGIN marker with no END.
        for text in ["--- BEGIN:BTSNOOP_LOG_SUMMARY (5 bytes in) ---\n!!!!\n--- END:BTSNOOP_LOG_SUMMARY ---\n",
                     "--- BEGIN:BTSNOOP_LOG_SUMMARY (5 bytes in) ---\nAgAAAAAA"] {
            let path = try CaptureTestPaths.temporaryFile("bad-snooz.txt", Array(text.utf8))
            #expect(throws: CaptureError.self) { _ = try CaptureFile(path: path) }
        }
    }

    // MARK: Android bugreport zip

    static func bugreport(withFullLogs: Bool) throws -> (path: String, current: [RecordToWrite], last: [RecordToWrite], summary: [RecordToWrite]) {
        let current = try records(source), last = try records(second), summary = try records(third)
        var zip = FieldLogArchiveWriter(format: .zip)
        zip.add("version.txt", text: "2.0")
        zip.add("bugreport-sdk_gphone64-UE1A-2024-01-01-10-00-00.txt", text: BtsnoozEncoder.dumpstate(BtsnoozEncoder.encode(summary)))
        if withFullLogs {
            zip.add("FS/data/misc/bluetooth/logs/btsnoop_hci.log.last", try Array(Data(contentsOf: URL(fileURLWithPath: second))))
            zip.add("FS/data/misc/bluetooth/logs/btsnoop_hci.log", try Array(Data(contentsOf: URL(fileURLWithPath: source))))
        }
        zip.add("FS/data/misc/logd/logcat", text: "01-01 10:00:00.000 I bt_stack: hello\n")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bleanalyze-tests-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent(withFullLogs ? "bugreport-full.zip" : "bugreport-snooz.zip").path
        try zip.write(to: path)
        return (path, current, last, summary)
    }

    @Test("bugreport zip: the current btsnoop_hci.log is analyzed, .last and the summary are listed and selectable")
    func bugreportZip() throws {
        let (path, current, last, summary) = try Self.bugreport(withFullLogs: true)
        let (got, info, _) = try Self.frames(path)
        Self.expectSame(got, Self.whole(current))
        let origin = try #require(info.fieldLog)
        #expect(origin.container == .zip)
        #expect(origin.member.name == "FS/data/misc/bluetooth/logs/btsnoop_hci.log")
        #expect(origin.others.map(\.name) == ["bugreport-sdk_gphone64-UE1A-2024-01-01-10-00-00.txt#btsnooz",
                                             "FS/data/misc/bluetooth/logs/btsnoop_hci.log.last"])
        Self.expectSame(try Self.frames(path + "#btsnoop_hci.log.last").frames, Self.whole(last))
        Self.expectSame(try Self.frames(path + "#FS/data/misc/bluetooth/logs/btsnoop_hci.log.last").frames, Self.whole(last))
        Self.expectSame(try Self.frames(path + "#btsnooz").frames, BtsnoozEncoder.expected(summary))
        #expect(throws: CaptureError.self) { _ = try CaptureFile(path: path + "#nothing.log") }
    }

    @Test("bugreport zip without full logs: the btsnooz summary in the dumpstate text is analyzed")
    func bugreportSummaryOnly() throws {
        let (path, _, _, summary) = try Self.bugreport(withFullLogs: false)
        let (got, info, _) = try Self.frames(path)
        Self.expectSame(got, BtsnoozEncoder.expected(summary))
        #expect(info.fieldLog?.member.kind == .btsnooz)
    }

    // MARK: iOS / macOS

    @Test("a .pklg inside a sysdiagnose tar.gz and inside a zip is found and read", arguments: [FieldLogArchiveWriter.Format.tarGzip, .zip])
    func packetLoggerInArchive(format: FieldLogArchiveWriter.Format) throws {
        let records = try Self.records(Self.source)
        var pklg = PacketLoggerWriter(bigEndian: false)
        for r in records { pklg.append(r) }
        var archive = FieldLogArchiveWriter(format: format)
        archive.add("sysdiagnose_2024.01.01/logs/ps.txt", text: "PID COMMAND\n1 launchd\n")
        archive.add("sysdiagnose_2024.01.01/system_logs.logarchive/Info.plist", text: "<plist/>")
        archive.add("sysdiagnose_2024.01.01/logs/Bluetooth/bluetoothd-hci-latest.pklg", pklg.bytes)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bleanalyze-tests-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent(format == .zip ? "pklg.zip" : "sysdiagnose.tar.gz").path
        try archive.write(to: path)
        let (got, info, summary) = try Self.frames(path)
        #expect(info.format == .packetlogger)
        #expect(info.fieldLog?.container == (format == .zip ? .zip : .tar))
        #expect(info.fieldLog?.member.kind == .packetlogger)
        #expect(summary.issues.isEmpty)
        // PacketLogger keeps µs timestamps and every HCI record.
        Self.expectSame(got, Self.whole(records))
    }

    @Test("archives with no log, cut archives and garbage give a reason, never a crash")
    func badArchives() throws {
        var empty = FieldLogArchiveWriter(format: .zip)
        empty.add("readme.txt", text: "nothing here")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bleanalyze-tests-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let emptyPath = dir.appendingPathComponent("empty.zip").path
        try empty.write(to: emptyPath)
        #expect(throws: CaptureError.self) { _ = try CaptureFile(path: emptyPath) }

        let (path, _, _, _) = try Self.bugreport(withFullLogs: true)
        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        for n in stride(from: 4, to: bytes.count, by: max(1, bytes.count / 23)) {
            let cut = try CaptureTestPaths.temporaryFile("cut.zip", Array(bytes.prefix(n)))
            if let file = try? CaptureFile(path: cut) { _ = file.read { _ in } }
        }
    }
}
