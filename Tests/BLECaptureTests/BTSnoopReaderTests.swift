import TestSupport
import BLECapture
import Foundation
import Testing

/// btsnoop reader: round trips through the writer, every prefix of a file, lying lengths.
@Suite struct BTSnoopReaderTests {
    /// Four records: Reset command, its Command Complete, an ACL packet cut by the capture, a user log.
    static let records: [RecordToWrite] = [
        RecordToWrite(timestamp: 1_700_000_000_000_000, direction: .sent, kind: .command, payload: [0x03, 0x0c, 0x00]),
        RecordToWrite(timestamp: 1_700_000_000_000_100, direction: .received, kind: .event, payload: [0x0e, 0x04, 0x01, 0x03, 0x0c, 0x00]),
        RecordToWrite(timestamp: 1_700_000_000_000_200, direction: .received, kind: .aclData,
                      payload: [0x40, 0x20, 0x07, 0x00, 0x03, 0x00, 0x04, 0x00, 0x0a], originalLength: 11),
        RecordToWrite(timestamp: 1_700_000_000_000_300, direction: .sent, kind: .aclData, payload: [0x40, 0x00, 0x00, 0x00]),
    ]

    static func file() -> [UInt8] {
        var w = BTSnoopWriter()
        for r in records { w.append(r) }
        return w.bytes
    }

    @Test func roundTrip() throws {
        let path = try CaptureTestPaths.temporaryFile("rt.btsnoop", Self.file())
        let (frames, summary, info) = try FrameFingerprint.of(path)
        #expect(info.format == .btsnoop)
        #expect(info.datalink == 1002)
        #expect(summary.frames == 4)
        #expect(!summary.truncated)
        #expect(frames.map(\.kind) == [.command, .event, .aclData, .aclData])
        #expect(frames.map(\.direction) == [.sent, .received, .received, .sent])
        #expect(frames[1].payload == [0x0e, 0x04, 0x01, 0x03, 0x0c, 0x00])
        #expect(frames[0].timestamp == 1_700_000_000_000_000)
    }

    @Test func captureTruncatedRecordIsMarked() throws {
        let path = try CaptureTestPaths.temporaryFile("cut.btsnoop", Self.file())
        let file = try CaptureFile(path: path)
        var cut: [Bool] = []
        _ = file.read { cut.append($0.isCaptureTruncated) }
        #expect(cut == [false, false, true, false])
    }

    /// Every prefix: the complete records are read, the cut one is reported at its offset, no trap.
    @Test func everyPrefix() throws {
        let bytes = Self.file()
        // Record boundaries: header 16, then 24-byte headers + data (with the H4 indicator).
        var ends: [Int] = []
        var offset = 16
        for r in Self.records { offset += 24 + 1 + r.payload.count; ends.append(offset) }
        for n in 16...bytes.count {
            let path = try CaptureTestPaths.temporaryFile("prefix.btsnoop", Array(bytes.prefix(n)))
            let (frames, summary, _) = try FrameFingerprint.of(path)
            let complete = ends.filter { $0 <= n }.count
            #expect(frames.count == complete, "prefix \(n)")
            #expect(summary.frames == complete)
            let atBoundary = n == 16 || ends.contains(n)
            #expect(summary.truncated == !atBoundary, "prefix \(n)")
            if !atBoundary {
                let start = complete == 0 ? 16 : ends[complete - 1]
                #expect(summary.issues.first?.offset == start, "prefix \(n)")
                #expect(summary.issues.first?.frameNumber == complete + 1)
            }
        }
    }

    @Test func headerTooShortOrWrongIsNotACapture() throws {
        let bytes = Self.file()
        for n in [0, 4, 8, 12, 15] {
            let path = try CaptureTestPaths.temporaryFile("short.btsnoop", Array(bytes.prefix(n)))
            #expect(throws: CaptureError.self) { try CaptureFile(path: path) }
        }
        var wrongVersion = bytes
        wrongVersion[11] = 2
        let path = try CaptureTestPaths.temporaryFile("v2.btsnoop", wrongVersion)
        #expect(throws: CaptureError.self) { try CaptureFile(path: path) }
    }

    /// An included length of 0xFFFFFFFF: reported with frame number and offset, nothing allocated.
    @Test func lyingLengthStopsWithAnIssue() throws {
        var bytes = Self.file()
        let second = 16 + 24 + 4   // start of the second record
        for i in 4..<8 { bytes[second + i] = 0xFF }
        let path = try CaptureTestPaths.temporaryFile("lie.btsnoop", bytes)
        let (frames, summary, _) = try FrameFingerprint.of(path)
        #expect(frames.count == 1)
        #expect(summary.issues.count == 1)
        #expect(summary.issues[0].frameNumber == 2)
        #expect(summary.issues[0].offset == second)
    }

    @Test func unknownH4IndicatorAndEmptyRecordAreKeptRaw() throws {
        var bytes = Self.file()
        bytes[16 + 24] = 0x09   // first record's H4 indicator
        let path = try CaptureTestPaths.temporaryFile("h4.btsnoop", bytes)
        let file = try CaptureFile(path: path)
        var problems: [RecordProblem?] = []
        let summary = file.read { problems.append($0.problem) }
        #expect(summary.frames == 4)
        #expect(problems[0] == .unknownType(9))
    }

    @Test func monitorRoundTrip() throws {
        var w = BTSnoopWriter(datalink: 2001)
        w.append(RecordToWrite(timestamp: 1, direction: .unknown, kind: .indexNew, adapter: 1,
                               payload: [0, 1, 1, 2, 3, 4, 5, 6] + Array("hci1\0\0\0\0".utf8)))
        w.append(RecordToWrite(timestamp: 2, direction: .sent, kind: .command, adapter: 1, payload: [0x03, 0x0c, 0x00]))
        w.append(RecordToWrite(timestamp: 3, direction: .received, kind: .aclData, adapter: 1, payload: [1, 0, 0, 0]))
        w.append(RecordToWrite(timestamp: 4, direction: .unknown, kind: .userLogging, adapter: 0xFFFF, payload: [6, 2, 0x41, 0, 0x68, 0x69, 0]))
        let path = try CaptureTestPaths.temporaryFile("mon.btsnoop", w.bytes)
        let file = try CaptureFile(path: path)
        var seen: [(FrameKind, Direction, UInt16)] = []
        _ = file.read { seen.append(($0.kind, $0.direction, $0.adapter)) }
        #expect(seen.map(\.0) == [.indexNew, .command, .aclData, .userLogging])
        #expect(seen.map(\.1) == [.unknown, .sent, .received, .unknown])
        #expect(seen.map(\.2) == [1, 1, 1, 0xFFFF])
    }

    /// Random bytes are refused as a capture (no format's magic, no plausible PacketLogger
    /// record); none traps. Counted: a reader that took garbage for a capture fails here.
    @Test func garbageIsNotACapture() throws {
        var g = SplitMix64Capture(seed: 7)
        var accepted: [Int] = []
        for i in 0..<200 {
            let bytes = (0..<(i * 7 % 300)).map { _ in UInt8(truncatingIfNeeded: g.next()) }
            let path = try CaptureTestPaths.temporaryFile("garbage.bin", bytes)
            if let file = try? CaptureFile(path: path) {
                var frames = 0
                _ = file.read { _ in frames += 1 }
                if frames > 0 { accepted.append(bytes.count) }
            }
        }
        #expect(accepted.isEmpty, "garbage read as a capture with frames, of these sizes: \(accepted)")
    }
}

typealias SplitMix64Capture = SplitMix64
