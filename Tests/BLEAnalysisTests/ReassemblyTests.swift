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
}
