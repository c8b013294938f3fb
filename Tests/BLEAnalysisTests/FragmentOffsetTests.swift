import TestSupport
import BLEAnalysis
import BLEProtocol
import BLECapture
import Foundation
import Testing

/// A malformed L2CAP PDU that came in several ACL fragments: the offset the analysis prints must be
/// the file offset of the byte that broke, in whichever fragment it lies (`FragmentMap`), not an
/// offset in the reassembled buffer.
@Suite struct FragmentOffsetTests {
    static let t0: Int64 = 1_763_700_000_000_000

    /// A btsnoop (H4) file: LE Connection Complete for handle 0x0040, then `pdu` (from its L2CAP
    /// header) cut at `cuts` into a start fragment and continuations, received. Returns the file and
    /// the file offset of each fragment's first data byte, read from the btsnoop layout (16-byte file
    /// header; per record a 24-byte header, the H4 indicator, the 4-byte ACL header).
    static func capture(_ pdu: [UInt8], cuts: [Int]) -> (bytes: [UInt8], fragmentOffsets: [Int]) {
        var b = CaptureBuilder(start: t0, peer: [0x11, 0x22, 0x33, 0x44, 0x55, 0xC6])
        b.leConnected(0, handle: 0x0040)
        var offsets: [Int] = []
        let bounds = [0] + cuts + [pdu.count]
        for k in 0 ..< bounds.count - 1 {
            offsets.append(b.bytes.count + 24 + 1 + 4)
            b.fragment(k == 0 ? 1000 : 1, .received, handle: 0x0040, pb: k == 0 ? 0x2000 : 0x1000,   // PB: first flushable / continuing
                       Array(pdu[bounds[k] ..< bounds[k + 1]]))
        }
        return (b.bytes, offsets)
    }

    static func l2cap(_ cid: UInt16, _ payload: [UInt8]) -> [UInt8] { CaptureBuilder.l2cap(cid, payload) }

    /// The one malformed frame's (frame, offset), from analysing `bytes`.
    static func malformed(_ bytes: [UInt8]) throws -> [(frame: Int, offset: Int)] {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("fragment-offset-\(UUID().uuidString).btsnoop")
        try Data(bytes).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let (analyzer, _) = try AnalysisFixtures.analyze(url.path)
        return analyzer.statistics.malformedExamples.map { ($0.frame, $0.offset) }
    }

    struct Case: Sendable, CustomStringConvertible {
        var description: String
        var pdu: [UInt8]
        var cuts: [Int]
        /// The PDU byte the error names (Core v5.4 field layouts), and the fragment it lies in.
        var pduByte: Int
        var fragment: Int
    }

    static let cases: [Case] = [
        // ATT Read By Type Response (Vol 3 Part F 3.4.4.2): Length 7, 24 bytes of list (not a
        // multiple of 7): the list, PDU byte 6, starts in the first of three fragments.
        Case(description: "list in the first fragment",
             pdu: l2cap(4, [0x09, 7, 2, 0, 2, 3, 0, 0x00, 0x2A, 4, 0, 2, 5, 0, 0x01, 0x2A, 6, 0, 2, 7, 0, 0x02, 0x2A, 8, 0, 2]),
             cuts: [12, 24], pduByte: 6, fragment: 0),
        // ATT Read By Type Request (3.4.4.1) with a 5-byte Attribute Type (2 or 16 allowed): the
        // type, PDU byte 9, starts the middle fragment's third byte.
        Case(description: "type in the middle fragment",
             pdu: l2cap(4, [0x08, 1, 0, 0xFF, 0xFF, 1, 2, 3, 4, 5]), cuts: [7, 10], pduByte: 9, fragment: 1),
        // The same with the type in the last fragment.
        Case(description: "type in the last fragment",
             pdu: l2cap(4, [0x08, 1, 0, 0xFF, 0xFF, 1, 2, 3, 4, 5]), cuts: [6, 9], pduByte: 9, fragment: 2),
        // LE Connection Parameter Update Request (Vol 3 Part A 4.20) with 7 of its 8 parameter bytes:
        // the parameters, PDU byte 8, start the second of three fragments.
        Case(description: "signalling command cut in the last fragment",
             pdu: l2cap(5, [0x12, 1, 7, 0, 0x18, 0, 0x28, 0, 0, 0, 0xC8]), cuts: [8, 13], pduByte: 8, fragment: 1),
        // SMP Pairing Public Key (Vol 3 Part H 3.5.6) with 60 of 64 bytes over two fragments.
        Case(description: "SMP key cut, two fragments",
             pdu: l2cap(6, [0x0C] + (0 ..< 60).map { UInt8($0) }), cuts: [30], pduByte: 5, fragment: 0),
    ]

    @Test(arguments: cases)
    func offsetNamesTheFileByte(_ c: Case) throws {
        let (bytes, fragments) = Self.capture(c.pdu, cuts: c.cuts)
        let bounds = [0] + c.cuts
        let expected = fragments[c.fragment] + (c.pduByte - bounds[c.fragment])
        #expect(bytes[expected] == c.pdu[c.pduByte])   // the layout arithmetic is right: that byte is there
        let found = try Self.malformed(bytes)
        #expect(found.count == 1)
        #expect(found.first?.frame == 2 + c.cuts.count)   // reported on the frame completing the PDU
        #expect(found.first?.offset == expected)
    }

    /// A GATT value that does not decode inside a fragmented PDU: the `Malformed` note `packets`
    /// shows (a `.problem` field of the upper layers handed over as a `CompletedPDU`) names the file
    /// offset of the byte, not an offset in the reassembly buffer. The host asks Read By Type for
    /// Heart Rate Measurement (0x2A37); the response (Core v5.4 Vol 3 Part F 3.4.4.2) carries two
    /// elements of 4 bytes. The first, handle 0x0010 and value [Flags 0x01, 0x50]: Flags bit 0 says
    /// the value is a uint16 (Heart Rate Service 3.1.1.1), which the one byte 0x50 — PDU byte 9, in
    /// the first fragment — cannot hold. The second (handle 0x0012, [0x00, 0x40]: uint8 72 bpm)
    /// comes in the second fragment. (A byte of the last fragment has the same offset in the file
    /// and in the reassembled buffer, so only an earlier fragment shows the mapping.)
    @Test func gattValueNoteNamesTheFileByte() throws {
        let request = Self.l2cap(4, [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x37, 0x2A])
        let response = Self.l2cap(4, [0x09, 4, 0x10, 0x00, 0x01, 0x50, 0x12, 0x00, 0x00, 0x48])
        let (received, fragments) = Self.capture(response, cuts: [10])
        // The request goes first (host → controller, handle 0x0040, PB 00): spliced in after the
        // Connection Complete, so the response's records move by its record's size.
        var w = BTSnoopWriter()
        w.append(RecordToWrite(timestamp: Self.t0 + 500, direction: .sent, kind: .aclData,
                               payload: [0x40, 0x00, UInt8(request.count), 0] + request))
        let requestRecord = Array(w.bytes.dropFirst(16))
        let connectionEnd = 16 + 24 + 1 + 21   // file header, Connection Complete record (H4 + 21 bytes)
        let bytes = Array(received[..<connectionEnd]) + requestRecord + Array(received[connectionEnd...])
        let expected = fragments[0] + requestRecord.count + 9
        #expect(bytes[expected] == 0x50)   // the layout arithmetic is right: that byte is there

        let url = FileManager.default.temporaryDirectory.appendingPathComponent("fragment-note-\(UUID().uuidString).btsnoop")
        try Data(bytes).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let analyzer = Analyzer()
        var problems: [(frame: Int, offset: Int)] = []
        func collect(_ fields: [Field], frame: Int) {
            for f in fields {
                switch f.value {
                case let .problem(e): problems.append((frame, e.offset))
                case let .group(g): collect(g, frame: frame)
                case let .list(items): items.forEach { collect($0, frame: frame) }
                default: break
                }
            }
        }
        _ = try CaptureFile(path: url.path).read { frame in
            analyzer.consume(frame) { pdu in
                var layers: [Layer] = []
                pdu.displayLayers(into: &layers)
                for layer in layers { collect(layer.fields, frame: frame.number) }
            }
        }
        #expect(problems.count == 1)
        #expect(problems.first?.frame == 4)   // Connection Complete, request, two fragments
        #expect(problems.first?.offset == expected)
    }
}
