import BLEBytes
import BLECapture
import BLEProtocol
import Testing
@testable import BLEReport

/// The text renderer reads layers flattened by `FlatLayers`: plain values only, nesting kept.
@Suite struct PacketTextTests {
    /// The flat form exists so that the packet list's two threads share no reference counts: an
    /// entry holding a String or an array would bring them back without any test noticing the
    /// output change.
    @Test func flatEntriesHoldNoReferences() {
        #expect(_isPOD(FlatLayers.Entry.self))
        #expect(_isPOD(FlatLayers.Value.self))
    }

    static let flags = NameTable([(0x01, "LE General Discoverable Mode"), (0x04, "BR/EDR Not Supported")])

    /// A layer with every nesting the decoders produce: a group, a list of structures, flags with an
    /// unnamed bit, a long byte value, a note.
    static let layer = Layer(protocolName: "HCI Event", name: "LE Meta Event", code: "0x3e", length: 40, fields: [
        Field("Subevent", .integer(2, .hex(bytes: 1))),
        Field("Reports", .list([
            [Field(.addressType, "Address Type", .integer(1, .named(bytes: 1, LEAddressTypeNames.table))),
             Field("Address", .address(BDAddr(0xC0FF_EE00_0001), type: nil)),
             Field("Data", .group([Field("Flags", .integer(0x0F, .flags(bytes: 1, flags)))]))],
            [Field("Value", .bytes(Array(0 ..< 18)))],
        ])),
        Field("Key", .secret([1, 2, 3, 4])),
    ], notes: ["2 trailing bytes: 00 01"])

    @Test func nestedFieldsAreIndentedAndCounted() {
        let frame = Frame(number: 7, timestamp: 0, direction: .received, kind: .event, adapter: 0, recordOffset: 0,
                          payloadOffset: 0, payload: UnsafeRawBufferPointer(start: nil, count: 0), originalLength: 0, rawType: 4)
        var text = ""
        PacketText(options: RenderOptions(), width: 80).render(frame, layers: [Self.layer], status: .ok, into: &text)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first?.hasPrefix("> HCI Event: LE Meta Event (0x3e) plen 40") == true)
        #expect(lines.first?.hasSuffix("#7 [hci0] 1970-01-01 00:00:00.000000") == true)
        #expect(Array(lines.dropFirst()) == [
            "        Subevent: 0x02",
            "        Reports: 2 entries",
            "          Reports #1:",
            "            Address Type: Random (0x01)",
            "            Address: C0:FF:EE:00:00:01 (static)",
            "            Data:",
            "              Flags: 0x0f",
            "                LE General Discoverable Mode",
            "                BR/EDR Not Supported",
            "                Unknown flags (0x0a)",
            "          Reports #2:",
            "            Value[18]:",
            "              00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f",
            "              10 11",
            "        Key: 01 02 … (4 bytes; --show-keys to print)",
            "        Note: 2 trailing bytes: 00 01",
            "",
        ])
    }

    @Test func nextSkipsWhatIsNested() {
        var flat = FlatLayers()
        let range = flat.append([Self.layer, Layer(protocolName: "ATT", name: "Write Command", code: "0x52")])
        #expect(flat.next(after: range.lowerBound) == range.upperBound - 1, "the first layer spans all but the last entry")
        #expect(flat.next(after: range.upperBound - 1) == range.upperBound)
    }
}
