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

    /// The writer skips eight bytes at a time when none needs an escape: every escaped character, at
    /// every position of a long string (both sides of each 8-byte boundary), next to ASCII and to
    /// multi-byte characters, comes out as RFC 8259 section 7 says.
    @Test(arguments: ["x", "é"])
    func escapesAtEveryPosition(_ filler: String) {
        let escapes: [(Character, String)] = [("\"", #"\""#), ("\\", #"\\"#), ("\n", #"\n"#), ("\r", #"\r"#), ("\t", #"\t"#),
                                              ("\u{0}", #"\u0000"#), ("\u{1F}", #"\u001f"#)]
        for (character, escaped) in escapes {
            for position in 0 ..< 24 {
                var text = String(repeating: filler, count: 24)
                var expected = String(repeating: filler, count: 24)
                let i = text.index(text.startIndex, offsetBy: position)
                text.replaceSubrange(i ... i, with: String(character))
                let j = expected.index(expected.startIndex, offsetBy: position)
                expected.replaceSubrange(j ... j, with: escaped)
                var out: [UInt8] = []
                JSONWriter.appendString(text, to: &out)
                #expect(String(decoding: out, as: UTF8.self) == "\"" + expected + "\"", "\(escaped) at \(position)")
            }
        }
        var out: [UInt8] = []
        JSONWriter.appendString(String(repeating: filler, count: 40) + " ~\u{7F}", to: &out)
        #expect(String(decoding: out, as: UTF8.self) == "\"" + String(repeating: filler, count: 40) + " ~\u{7F}\"")
    }

    @Test func escapesOnlyWhatItMust() {
        var out: [UInt8] = []
        JSONWriter.appendString("a\"b\\c\nd\u{1}é", to: &out)
        #expect(String(decoding: out, as: UTF8.self) == #""a\"b\\c\nd\u0001é""#)
    }
}

/// Member names: literals (`JSONKey` from a `StaticString`) and names made at run time are escaped
/// like values; a copy of a writer is a value of its own.
@Suite struct JSONKeyTests {
    @Test func namesAreEscaped() throws {
        var w = JSONWriter()
        w.beginObject()
        w.int("a\"b", 1)
        w.string(JSONKey("made \\ at run time"), "x")
        w.beginArray("list")
        w.int(nil, 2)
        w.endArray()
        w.endObject()
        #expect(w.output == #"{"a\"b":1,"made \\ at run time":"x","list":[2]}"#)
    }

    @Test func copiesDoNotShareBytes() {
        var a = JSONWriter()
        a.beginObject()
        var b = a
        b.int("only in b", 1)
        a.int("only in a", 2)
        a.endObject()
        b.endObject()
        #expect(a.output == #"{"only in a":2}"#)
        #expect(b.output == #"{"only in b":1}"#)
    }
}
