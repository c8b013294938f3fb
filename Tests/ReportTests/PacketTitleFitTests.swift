import BLEBytes
import BLECapture
import BLEProtocol
import Foundation
import Testing
@testable import BLEReport

/// Title lines with relative times (`packets -t`): btmon's compact block, a long name cut with `..`
/// to end at the width, colour codes that leave the columns alone.
@Suite struct PacketTitleFitTests {
    static func frame(_ number: Int, at micros: Int64, adapter: UInt16 = 0) -> Frame {
        Frame(number: number, timestamp: micros, direction: .sent, kind: .command, adapter: adapter, recordOffset: 0,
              payloadOffset: 0, payload: UnsafeRawBufferPointer(start: nil, count: 0), originalLength: 0, rawType: 1)
    }

    static func title(_ name: String, code: String = "0x08|0x0041", length: Int = 13, frame: Frame,
                      origin: Int64?, colour: Bool = false) -> String {
        let layer = Layer(protocolName: "HCI Command", name: name, code: code, length: length, fields: [])
        var out = TextBuffer()
        var clock = ClockCache(origin: origin)
        PacketText(options: RenderOptions(), width: 79, colour: colour).render(frame, layers: [layer], status: .ok, into: &out, clock: &clock)
        return String(out.string.dropLast())   // the newline
    }

    @Test func longNameIsCutToEndAtTheWidth() {
        let origin: Int64 = 1_000_000_000
        let line = Self.title("LE Set Extended Scan Parameters", frame: Self.frame(121, at: origin + 762_159), origin: origin)
        // 68 columns of title + 2 + 13 of block is 83: four columns and the two dots come off the name.
        #expect(line == "< HCI Command: LE Set Extended Scan Para.. (0x08|0x0041) plen 13  #121 0.762159")
        #expect(line.count == 79)
    }

    @Test func shortTitlesArePaddedAndAdaptersOtherThanZeroShown() {
        let line = Self.title("Reset", code: "0x03|0x0003", length: 0, frame: Self.frame(1, at: 5_000_000, adapter: 1), origin: 4_000_000)
        #expect(line.hasPrefix("< HCI Command: Reset (0x03|0x0003) plen 0   "))
        #expect(line.hasSuffix("   #1 [hci1] 1.000000"))
        #expect(line.count == 79)
        // A clock that went back prints a negative offset rather than a wrapped number.
        #expect(Self.title("Reset", code: "0x03|0x0003", length: 0, frame: Self.frame(2, at: 3_999_900), origin: 4_000_000)
            .hasSuffix("#2 -0.000100"))
    }

    /// Dates and times of day are never cut (the block is wider; the default width is 110), and a
    /// name with fewer than 8 characters left after the cut is kept whole.
    @Test func namesAreKeptWhenNotRelativeOrTooShort() {
        let dated = Self.title("LE Set Extended Scan Parameters", frame: Self.frame(121, at: 762_159), origin: nil)
        #expect(dated.hasPrefix("< HCI Command: LE Set Extended Scan Parameters (0x08|0x0041) plen 13  #121 [hci0] 1970-01-01"))
        let codes = String(repeating: "0x01 ", count: 12)
        let kept = Self.title("Short Name", code: codes, frame: Self.frame(9, at: 1), origin: 0)
        #expect(kept.contains("Short Name (" + codes + ") plen 13  #9 0.000001"))
    }

    @Test func colourAddsCodesOnly() {
        let plain = Self.title("LE Set Extended Scan Parameters", frame: Self.frame(121, at: 762_159), origin: 0)
        let coloured = Self.title("LE Set Extended Scan Parameters", frame: Self.frame(121, at: 762_159), origin: 0, colour: true)
        #expect(coloured.hasPrefix("\u{1B}[0;34m< HCI Command"))
        var stripped = coloured
        while let r = stripped.range(of: "\u{1B}\\[[0-9;]*m", options: .regularExpression) { stripped.removeSubrange(r) }
        #expect(stripped == plain)
    }
}
