import Foundation
import Testing
@testable import BLEReport

/// JSON strings: every character a capture can put in a name or message survives a round trip
/// through a standard JSON parser, and only what RFC 8259 section 7 requires is escaped.
@Suite struct JSONWriterTests {
    @Test(arguments: [
        "plain ASCII",
        "quote \" backslash \\ slash /",
        "controls \u{0}\u{1}\u{8}\t\n\r\u{1F} end",
        "Pulsoxímetro ♥ 𝄞 🙂",
        "\"",
        "",
        "tail\u{7F}",
    ])
    func roundTrips(_ text: String) throws {
        var w = JSONWriter()
        w.beginObject()
        w.string("v", text)
        w.endObject()
        let parsed = try JSONSerialization.jsonObject(with: Data(w.output.utf8)) as? [String: String]
        #expect(parsed?["v"] == text)
    }

    @Test func escapesOnlyWhatItMust() {
        var out: [UInt8] = []
        JSONWriter.appendString("a\"b\\c\nd\u{1}é", to: &out)
        #expect(String(decoding: out, as: UTF8.self) == #""a\"b\\c\nd\u0001é""#)
    }
}
