import BLEProtocol
@testable import BLEReplay
import Testing

@Suite struct H4ParserTests {
    // 04 0e 04 01 03 0c 00: Command Complete (Reset, Success)
    static let event: [UInt8] = [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]
    // 02 01 20 07 00 | 03 00 04 00 0a 03 00: ACL handle 1, ATT Read Request handle 3
    static let acl: [UInt8] = [0x02, 0x01, 0x20, 0x07, 0x00, 0x03, 0x00, 0x04, 0x00, 0x0A, 0x03, 0x00]
    // 05 01 00 02 40 aa bb: ISO handle 1, length 2 (upper flag bits set in the length word)
    static let iso: [UInt8] = [0x05, 0x01, 0x00, 0x02, 0x40, 0xAA, 0xBB]

    static func drain(_ p: inout H4Parser) -> [H4Packet] {
        var out: [H4Packet] = []
        while let packet = p.next() { out.append(packet) }
        return out
    }

    @Test func splitsAStreamFedByteByByte() {
        var p = H4Parser(accepting: H4Parser.fromController)
        var got: [H4Packet] = []
        for b in Self.event + Self.acl + Self.iso {
            p.feed([b])
            got += Self.drain(&p)
        }
        #expect(got == [H4Packet(.event, Array(Self.event.dropFirst())), H4Packet(.acl, Array(Self.acl.dropFirst())),
                        H4Packet(.iso, Array(Self.iso.dropFirst()))])
        #expect(p.problems.isEmpty)
        #expect(p.pendingBytes == 0)
    }

    @Test func needsTheWholePacket() {
        var p = H4Parser(accepting: H4Parser.fromController)
        for n in 0 ..< Self.acl.count {
            var q = p
            q.feed(Array(Self.acl.prefix(n)))
            #expect(q.next() == nil)
        }
        p.feed(Self.acl)
        #expect(p.next() != nil)
    }

    @Test func skipsGarbageAndSaysWhere() {
        var p = H4Parser(accepting: H4Parser.fromController)
        // 0xff 0x00 are no indicator; 0x01 (a command) may not come from a controller.
        p.feed([0xFF, 0x00, 0x01] + Self.event + [0x99] + Self.event)
        let got = Self.drain(&p)
        #expect(got.count == 2)
        #expect(p.problems == [H4Parser.Problem(offset: 0, count: 3, firstByte: 0xFF), H4Parser.Problem(offset: 10, count: 1, firstByte: 0x99)])
        #expect(p.skippedBytes == 4)
        #expect(p.problems.first?.description.contains("stream offset 0") == true)
    }

    @Test func hostSideAcceptsCommandsNotEvents() {
        var p = H4Parser(accepting: H4Parser.fromHost)
        // An event (04 0e 04 04 ff ff 00: no byte of it is a host indicator) between two Resets.
        p.feed([0x01, 0x03, 0x0C, 0x00, 0x04, 0x0E, 0x04, 0x04, 0xFF, 0xFF, 0x00, 0x01, 0x03, 0x0C, 0x00])
        #expect(Self.drain(&p) == [H4Packet(.command, [0x03, 0x0C, 0x00]), H4Packet(.command, [0x03, 0x0C, 0x00])])
        #expect(p.problems == [H4Parser.Problem(offset: 4, count: 7, firstByte: 0x04)])
    }

    @Test func compactsAfterManyPackets() {
        var p = H4Parser(accepting: H4Parser.fromController)
        for _ in 0 ..< 10_000 {
            p.feed(Self.event)
            #expect(p.next() != nil)
        }
        #expect(p.pendingBytes == 0)
    }

    /// Seeded random streams: never trap, never return more bytes than fed, nothing buffered beyond one packet.
    @Test func randomStreamsNeverTrap() {
        var seed: UInt64 = 0x5EED
        func next() -> UInt64 {
            seed &+= 0x9E37_79B9_7F4A_7C15
            var z = seed
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        for _ in 0 ..< 2_000 {
            var p = H4Parser(accepting: H4Parser.fromController)
            let bytes = (0 ..< Int(next() % 300)).map { _ in UInt8(truncatingIfNeeded: next()) }
            p.feed(bytes)
            var out = 0
            while let packet = p.next() { out += packet.bytes.count + 1 }
            #expect(out + p.pendingBytes + p.skippedBytes == bytes.count)
            #expect(p.pendingBytes <= H4Parser.maxPacket)
        }
    }
}
