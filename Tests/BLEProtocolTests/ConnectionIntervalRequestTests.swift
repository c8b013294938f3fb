import Testing
import BLEBytes
import BLEProtocol

/// Where a host command asks for a connection interval (Core v5.4 Vol 4 Part E 7.8.12, 7.8.18,
/// 7.8.66), found by `ConnectionIntervalRequest` and rewritten to the fastest, 7.5 ms.
struct ConnectionIntervalRequestTests {
    // LE Create Connection (0x200D), 25 bytes: scan 0x0060/0x0030, filter 0, peer random
    // C0:11:22:33:44:55, own public, interval 0x0018–0x0028, latency 0, timeout 0x01F4, CE 0/0.
    static let create = "0d 20 19 60 00 30 00 00 01 55 44 33 22 11 c0 00 18 00 28 00 00 00 f4 01 00 00 00 00"
    // LE Connection Update (0x2013), handle 0x0040, interval 0x0027–0x0027.
    static let update = "13 20 0e 40 00 27 00 27 00 00 00 f4 01 00 00 00 00"
    // LE Extended Create Connection (0x2043): filter 0, own 0, peer random C0:11:22:33:44:55,
    // PHYs 1M and Coded (0x05): two blocks of 16 bytes.
    static let extended = "43 20 2a 00 00 01 55 44 33 22 11 c0 05"
        + " 60 00 60 00 18 00 28 00 00 00 f4 01 00 00 00 00"
        + " 60 00 60 00 30 00 50 00 00 00 f4 01 00 00 00 00"

    @Test(arguments: [(create, [16]), (update, [5]), (extended, [17, 33]), ("03 0c 00", [])])
    func findsEveryIntervalPair(hex: String, offsets: [Int]) throws {
        #expect(try ConnectionIntervalRequest.minimumOffsets(try #require(Hex.bytes(hex))) == offsets)
    }

    @Test func asksForTheFastestIntervalAndLeavesTheRest() throws {
        let bytes = try #require(Hex.bytes(Self.extended))
        let fast = try #require(ConnectionIntervalRequest.requesting(ConnectionIntervalRequest.fastest, in: bytes))
        #expect(fast.count == bytes.count)
        for o in [17, 33] { #expect(Array(fast[o ..< o + 4]) == [0x06, 0x00, 0x06, 0x00]) }
        var rest = fast, original = bytes
        for o in [33, 17] { rest.removeSubrange(o ..< o + 4); original.removeSubrange(o ..< o + 4) }
        #expect(rest == original)
    }

    @Test func aCommandCutShortIsLeftAlone() throws {
        let cut = try #require(Hex.bytes(Self.create)).prefix(18)
        #expect(ConnectionIntervalRequest.requesting(6, in: Array(cut)) == nil)
        #expect(ConnectionIntervalRequest.requesting(6, in: try #require(Hex.bytes("03 0c 00"))) == nil)
    }
}
