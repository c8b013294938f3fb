import BLEBytes
import Testing

/// swift-nio's verbs on `ByteReader` (STYLE 6.3): `peek…(at:)` reads relative to the cursor without
/// moving it, `get…(at:)` reads at an absolute index; both answer nil, never trap, when the bytes
/// are not all there. `withReader` gives a reader over an array or a slice; `setU16le`/`setU48le`
/// rewrite in place and do nothing out of range.
@Suite struct ByteReaderVerbTests {
    static let bytes: [UInt8] = [0x01, 0x34, 0x12, 0x78, 0x56, 0x34, 0x12, 0xAA, 0xBB]

    @Test func peekIsRelativeToTheCursorAndDoesNotMove() throws {
        try Self.bytes.withReader(base: 1000) { r in
            try r.skip(1, "first")
            #expect(r.peekU8() == 0x34)
            #expect(r.peekU16le() == 0x1234)
            #expect(r.peekU32le(at: 2) == 0x1234_5678)
            #expect(r.peekU64le(at: 0) == 0xBBAA_1234_5678_1234)
            #expect(r.position == 1, "peeking moved the cursor")
            // Past the end: nil at every width and for negative offsets.
            #expect(r.peekU8(at: 8) == nil && r.peekU8(at: -1) == nil)
            #expect(r.peekU16le(at: 7) == nil && r.peekU32le(at: 5) == nil && r.peekU64le(at: 1) == nil)
            #expect(r.peekU16le(at: 6) == 0xBBAA)
        }
    }

    @Test func getIsAbsoluteWhateverTheCursor() throws {
        try Self.bytes.withReader { r in
            try r.skip(5, "moved")
            #expect(r.getU8(at: 0) == 0x01)
            #expect(r.getU16le(at: 1) == 0x1234 && r.getU16be(at: 1) == 0x3412)
            #expect(r.getU24le(at: 1) == 0x78_1234)
            #expect(r.getU32le(at: 3) == 0x1234_5678 && r.getU32be(at: 3) == 0x7856_3412)
            #expect(r.getU48le(at: 1) == 0x1234_5678_1234)
            #expect(r.getU64le(at: 1) == 0xBBAA_1234_5678_1234)
            #expect(r.getU8(at: 9) == nil && r.getU16le(at: 8) == nil && r.getU24le(at: 7) == nil)
            #expect(r.getU32le(at: 6) == nil && r.getU48le(at: 4) == nil && r.getU64le(at: 2) == nil && r.getU8(at: -1) == nil)
            #expect(r.position == 5)
        }
    }

    @Test func getSliceKeepsFileOffsets() throws {
        let (value, offset, missing) = Self.bytes.withReader(base: 500) { r in
            let s = r.getSlice(at: 3, count: 4)
            return (s?.getU32le(at: 0), s?.absoluteOffset, r.getSlice(at: 6, count: 4) == nil && r.getSlice(at: -1, count: 1) == nil)
        }
        #expect(value == 0x1234_5678 && offset == 503 && missing)
    }

    @Test func withReaderOverASliceAndThrowsThrough() {
        let slice = Self.bytes[3...]
        #expect(slice.withReader { $0.getU16le(at: 0) } == 0x5678)
        #expect(throws: DecodeError.self) {
            try slice.withReader { r throws(DecodeError) in _ = try r.u64le("too long") ; _ = try r.u8("past") }
        }
    }

    @Test func setWritesInPlaceAndNeverTraps() {
        var b: [UInt8] = [0, 0, 0, 0, 0, 0, 0]
        b.setU16le(0xBEEF, at: 1)
        b.setU48le(0x0605_0403_0201, at: 1)
        #expect(b == [0, 1, 2, 3, 4, 5, 6])
        b.setU16le(0xFFFF, at: 6)
        b.setU48le(0xFFFF, at: 2)
        b.setU16le(0xFFFF, at: -1)
        #expect(b == [0, 1, 2, 3, 4, 5, 6], "out of range: unchanged")
    }
}
