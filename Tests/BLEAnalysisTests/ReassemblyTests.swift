import BLEBytes
import BLEProtocol
import Testing

/// L2CAP reassembly from ACL fragments: whole PDUs, fragments, interleaved links, a start that
/// arrives mid-PDU, an orphan continuation (capture began mid-PDU).
@Suite struct ReassemblyTests {
    typealias Key = L2CAPReassembler.Key
    static let a = Key(adapter: 0, handle: 1, received: true)
    static let b = Key(adapter: 0, handle: 2, received: true)

    /// Pushes `bytes` and returns the delivered PDUs and the problem.
    static func push(_ r: inout L2CAPReassembler, _ key: Key, start: Bool, _ bytes: [UInt8], frame: Int = 1)
        -> (pdus: [[UInt8]], problem: L2CAPReassembler.Problem?) {
        var out: [[UInt8]] = []
        let problem = bytes.withUnsafeBytes { raw in
            r.push(key, isStart: start, data: ByteReader(raw), frame: frame) { pdu, _ in out.append(Array(pdu.remainingBytes)) }
        }
        return (out, problem)
    }

    // L2CAP: length 7, CID 4, ATT Read By Group Type Request 0x0001-0xffff, type 0x2800
    static let whole: [UInt8] = [0x07, 0x00, 0x04, 0x00, 0x10, 0x01, 0x00, 0xff, 0xff, 0x00, 0x28]

    @Test func wholePDUIsDeliveredAtOnce() {
        var r = L2CAPReassembler()
        let (pdus, problem) = Self.push(&r, Self.a, start: true, Self.whole)
        #expect(pdus == [Self.whole])
        #expect(problem == nil)
        #expect(r.incompleteCount == 0)
    }

    @Test func fragmentsAreJoined() {
        var r = L2CAPReassembler()
        #expect(Self.push(&r, Self.a, start: true, Array(Self.whole[0..<5])).pdus.isEmpty)
        #expect(Self.push(&r, Self.a, start: false, Array(Self.whole[5..<8])).pdus.isEmpty)
        let (pdus, problem) = Self.push(&r, Self.a, start: false, Array(Self.whole[8...]))
        #expect(pdus == [Self.whole])
        #expect(problem == nil)
    }

    @Test func interleavedLinksDoNotMix() {
        var r = L2CAPReassembler()
        let other: [UInt8] = [0x05, 0x00, 0x04, 0x00, 0x0a, 0x03, 0x00, 0xaa, 0xbb]
        _ = Self.push(&r, Self.a, start: true, Array(Self.whole[0..<6]))
        _ = Self.push(&r, Self.b, start: true, Array(other[0..<4]))
        let first = Self.push(&r, Self.a, start: false, Array(Self.whole[6...]))
        let second = Self.push(&r, Self.b, start: false, Array(other[4...]))
        #expect(first.pdus == [Self.whole])
        #expect(second.pdus == [other])
    }

    @Test func startMidPDUReportsThePartialOneAndStartsAnew() {
        var r = L2CAPReassembler()
        _ = Self.push(&r, Self.a, start: true, Array(Self.whole[0..<6]), frame: 10)
        let (pdus, problem) = Self.push(&r, Self.a, start: true, Self.whole, frame: 11)
        #expect(pdus == [Self.whole])
        #expect(problem == .incompletePDU(firstFrame: 10, have: 6, expected: 11))
    }

    @Test func orphanContinuationIsReported() {
        var r = L2CAPReassembler()
        let (pdus, problem) = Self.push(&r, Self.a, start: false, [1, 2, 3])
        #expect(pdus.isEmpty)
        #expect(problem == .orphanContinuation)
    }

    @Test func shortStartAndOverrun() {
        var r = L2CAPReassembler()
        #expect(Self.push(&r, Self.a, start: true, [0x07, 0x00]).problem == .shortStart(2))
        let (pdus, problem) = Self.push(&r, Self.a, start: true, Self.whole + [0xEE])
        #expect(pdus == [Self.whole])
        #expect(problem == .overrun(expected: 11, got: 12))
    }

    /// A lying L2CAP length (0xFFFF) buffers at most the largest PDU and never traps.
    @Test func lyingLengthIsBounded() {
        var r = L2CAPReassembler()
        _ = Self.push(&r, Self.a, start: true, [0xff, 0xff, 0x04, 0x00, 0x01])
        for _ in 0..<10 { _ = Self.push(&r, Self.a, start: false, [UInt8](repeating: 0, count: 1000)) }
        #expect(r.incompleteCount == 1)
        r.reset(adapter: 0, handle: 1)
        #expect(r.incompleteCount == 0)
    }

    /// The fragment map: every byte of a PDU split over three fragments, far apart in a "file",
    /// maps to the offset where that byte lies; a one-fragment PDU's reader offsets are file offsets.
    @Test func fragmentMapGivesEachByteItsFileOffset() {
        // A file of 200 bytes with the PDU's fragments at 10, 90 and 150 (an empty continuation between).
        var file = [UInt8](repeating: 0xEE, count: 200)
        let parts: [(at: Int, bytes: ArraySlice<UInt8>)] = [(10, Self.whole[0..<5]), (60, []), (90, Self.whole[5..<8]), (150, Self.whole[8...])]
        for p in parts { file.replaceSubrange(p.at ..< p.at + p.bytes.count, with: p.bytes) }
        var r = L2CAPReassembler()
        var got: (pdu: [UInt8], base: Int, origin: L2CAPReassembler.Origin)? = nil
        file.withUnsafeBytes { raw in
            for (k, p) in parts.enumerated() {
                let data = ByteReader(UnsafeRawBufferPointer(rebasing: raw[p.at ..< p.at + p.bytes.count]), base: p.at)
                r.push(Self.a, isStart: k == 0, data: data, frame: 20 + k) { pdu, origin in
                    got = (Array(pdu.remainingBytes), pdu.absoluteOffset, origin)
                }
            }
        }
        guard let got else { Issue.record("no PDU"); return }
        #expect(got.pdu == Self.whole)
        #expect(got.origin.fragments == 4)
        let map = got.origin.map
        #expect(map.isFragmented)
        #expect(map.map(\.frame) == [20, 22, 23])   // the empty fragment carries no bytes
        #expect(map.map(\.length) == [5, 3, 3])
        for p in 0 ..< got.pdu.count {
            let offset = map.fileOffset(got.base + p)
            #expect(file[offset] == got.pdu[p], "PDU byte \(p) at file offset \(offset)")
        }
        let e = map.fileError(DecodeError(kind: .truncated(needed: 2, available: 1), offset: got.base + 6, field: "x"))
        #expect(e.offset == 91)

        var single: L2CAPReassembler.Origin? = nil
        Self.whole.withUnsafeBytes { raw in
            r.push(Self.b, isStart: true, data: ByteReader(raw, base: 300), frame: 30) { _, origin in single = origin }
        }
        #expect(single?.map.isFragmented == false)
        #expect(single?.map.fileOffset(305) == 305)
        #expect(single?.map.map(\.fileOffset) == [300])
    }
}
