import BLEBytes
import Testing

/// The bounds-checked reader: every read either returns the value or throws naming the field and
/// the absolute offset; nothing traps, whatever the bytes.
@Suite struct ByteReaderTests {
    static func withReader<T>(_ bytes: [UInt8], base: Int = 100, _ body: (inout ByteReader) throws -> T) rethrows -> T {
        try bytes.withUnsafeBytes { raw in
            var r = ByteReader(raw, base: base)
            return try body(&r)
        }
    }

    @Test func integersAreLittleOrBigEndianAsAsked() throws {
        try Self.withReader([0x34, 0x12, 0x12, 0x34, 0x78, 0x56, 0x34, 0x12, 0x01, 0x02, 0x03]) { r in
            let a = try r.u16le("a"), b = try r.u16be("b"), c = try r.u32le("c"), d = try r.u24le("d")
            #expect(a == 0x1234)
            #expect(b == 0x1234)
            #expect(c == 0x1234_5678)
            #expect(d == 0x03_0201)
            #expect(r.isAtEnd)
        }
    }

    @Test func shortReadThrowsWithFieldAndAbsoluteOffset() {
        Self.withReader([0x01, 0x02, 0x03]) { r in
            _ = try? r.u8("first")
            #expect(throws: DecodeError(kind: .truncated(needed: 4, available: 2), offset: 101, field: "")) { try r.u32le("Length") }
            // A failed read does not move the cursor.
            #expect(r.position == 1)
            #expect(r.remaining == 2)
        }
    }

    @Test func slicesShareMemoryAndKeepOffsets() throws {
        try Self.withReader([0xAA, 0x01, 0x02, 0x03, 0xBB]) { r in
            _ = try r.u8("skip")
            var s = try r.slice(3, "inner")
            #expect(s.absoluteOffset == 101)
            let x = try s.u8("x")
            #expect(x == 1)
            #expect(throws: DecodeError.self) { try s.u32le("too long") }
            let after = try r.u8("after")
            #expect(after == 0xBB)
            #expect(r.remainingRange == ByteRange(offset: 105, count: 0))
        }
    }

    @Test func negativeAndOversizedSlicesThrow() {
        Self.withReader([1, 2, 3]) { r in
            #expect(throws: DecodeError.self) { try r.slice(-1, "negative") }
            #expect(throws: DecodeError.self) { try r.slice(Int.max, "huge") }
            #expect(r.remaining == 3)
        }
    }

    @Test func expectEndReportsLeftovers() {
        Self.withReader([1, 2]) { r in
            _ = try? r.u8("one")
            #expect(throws: DecodeError.self) { try r.expectEnd("record") }
            _ = try? r.u8("two")
            #expect(throws: Never.self) { try r.expectEnd("record") }
        }
    }

    @Test func hexRoundTrip() {
        #expect(Hex.string([0x0a, 0x03, 0x00]) == "0a 03 00")
        #expect(Hex.bytes("0a 03 00") == [0x0a, 0x03, 0x00])
        #expect(Hex.bytes("0a:0B") == [0x0a, 0x0b])
        #expect(Hex.bytes("0a0") == nil)
        #expect(Hex.bytes("zz") == nil)
        #expect(Hex.pad(0x2a, 4) == "002a")
    }

    /// Every read on random bytes of every length either succeeds or throws: never traps.
    @Test func randomReadsNeverTrap() {
        var state: UInt64 = 42
        func next() -> UInt64 { state &+= 0x9E37_79B9_7F4A_7C15; var z = state; z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9; return z ^ (z >> 31) }
        for length in 0..<64 {
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: next()) }
            Self.withReader(bytes) { r in
                for _ in 0..<32 {
                    switch next() % 7 {
                    case 0: _ = try? r.u8("a")
                    case 1: _ = try? r.u16le("b")
                    case 2: _ = try? r.u32be("c")
                    case 3: _ = try? r.u64le("d")
                    case 4: _ = try? r.slice(Int(next() % 9), "e")
                    case 5: _ = try? r.copy(Int(next() % 5), "f")
                    default: _ = r.peekU8(at: Int(next() % 4))
                    }
                    #expect(r.position <= bytes.count)
                }
            }
        }
    }
}
