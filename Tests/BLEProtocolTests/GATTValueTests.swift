import Testing
import BLEBytes
@testable import BLEProtocol

private typealias S = ATTTestSupport

private func decode(_ uuid: UInt16, _ hex: String) -> [String]? {
    S.show(hex) { GATTValues.decode(uuid: BluetoothUUID(uuid16: uuid), &$0) }.map { S.render($0) }
}

/// (UUID, value, rendered fields) for every value decoder.
let gattValueVectors: [(UInt16, String, [String])] = [
    (0x2800, "0d 18", ["UUID: Heart Rate (0x180D)"]),
    (0x2801, "0f 18", ["UUID: Battery Service (0x180F)"]),
    // Include: service 0x0005…0x0009, Device Information
    (0x2802, "05 00 09 00 0a 18", ["Included Service Handle: 0x0005", "End Group Handle: 0x0009", "UUID: Device Information (0x180A)"]),
    // Characteristic: Read|Notify, value handle 0x000c, Heart Rate Measurement
    (0x2803, "12 0c 00 37 2a", ["Properties: 0x12 [Read, Notify]", "Value Handle: 0x000c", "UUID: Heart Rate Measurement (0x2A37)"]),
    (0x2900, "01 00", ["Properties: 0x0001 [Reliable Write]"]),
    (0x2901, "42 50 4d 00", ["Description: BPM"]),
    (0x2902, "01 00", ["Configuration: 0x0001 [Notification]"]),
    (0x2902, "02 00", ["Configuration: 0x0002 [Indication]"]),
    (0x2903, "01 00", ["Configuration: 0x0001 [Broadcast]"]),
    (0x2A00, "48 52 4d", ["Name: HRM"]),
    (0x2A01, "41 03", ["Category: Heart Rate Sensor: Heart Rate Belt (0x0341)"]),
    // PPCP: 30–50 ms, latency 4, timeout 4 s
    (0x2A04, "18 00 28 00 04 00 90 01", ["Minimum Connection Interval: 30.0 msec", "Maximum Connection Interval: 50.0 msec",
                                         "Peripheral Latency: 4", "Connection Supervision Timeout: 4000.0 msec"]),
    (0x2A05, "01 00 ff ff", ["Start Handle: 0x0001", "End Handle: 0xffff"]),
    (0x2A07, "f8", ["Tx Power: -8 dBm"]),
    (0x2A19, "5a", ["Level: 90.0 %"]),
    // Temperature Measurement: °C, time stamp and type present; 36.6 (mantissa 366, exponent -1);
    // 2022-03-15 10:30:00; Body (general)
    (0x2A1C, "06 6e 01 00 ff e6 07 03 0f 0a 1e 00 02", ["Flags: 0x06 [Time Stamp Present, Temperature Type Present]",
        "Temperature: 36.6 °C", "Time Stamp: 2022-03-15 10:30:00", "Temperature Type: Body (general) (0x02)"]),
    (0x2A1D, "03", ["Type: Ear (0x03)"]),
    // System ID: manufacturer identifier 0x0504030201, OUI 0x080706
    (0x2A23, "01 02 03 04 05 06 07 08", ["Manufacturer Identifier: 0x0504030201", "Organizationally Unique Identifier: 0x080706"]),
    (0x2A24, "4d 31", ["Model Number: M1"]),
    (0x2A25, "30 30 37", ["Serial Number: 007"]),
    (0x2A26, "31 2e 30", ["Firmware Revision: 1.0"]),
    (0x2A27, "72 42", ["Hardware Revision: rB"]),
    (0x2A28, "32 2e 31", ["Software Revision: 2.1"]),
    (0x2A29, "41 43 4d 45", ["Manufacturer Name: ACME"]),
    // Heart Rate Measurement: flags 0x16 (UINT8, contact supported+detected, RR present), 72 bpm, RR 1024/1024 s
    (0x2A37, "16 48 00 04", ["Flags: 0x16 [Sensor Contact Detected, Sensor Contact Supported, RR-Interval Present]",
                             "Heart Rate: 72.0 bpm", "Sensor Contact: Supported, detected", "RR-Interval: 1.0 s"]),
    // Heart Rate Measurement: flags 0x19 (UINT16, energy, RR), 320 bpm, 16 kJ, RR 512/1024 s
    (0x2A37, "19 40 01 10 00 00 02", ["Flags: 0x19 [Heart Rate Value Format UINT16, Energy Expended Present, RR-Interval Present]",
                                      "Heart Rate: 320.0 bpm", "Sensor Contact: Not supported", "Energy Expended: 16.0 kJ",
                                      "RR-Interval: 0.5 s"]),
    (0x2A38, "01", ["Location: Chest (0x01)"]),
    (0x2A39, "01", ["Command: Reset Energy Expended (0x01)"]),
    // PnP ID: Bluetooth SIG source, Nordic (0x0059), product 0x0001, version 0x0010
    (0x2A50, "01 59 00 01 00 10 00", ["Vendor ID Source: Bluetooth SIG (0x01)", "Vendor ID: Nordic Semiconductor ASA (0x0059)",
                                      "Product ID: 0x0001", "Product Version: 0x0010"]),
    (0x2A50, "02 6b 1d 46 02 01 00", ["Vendor ID Source: USB Implementer's Forum (0x02)", "Vendor ID: 0x1d6b",
                                      "Product ID: 0x0246", "Product Version: 0x0001"]),
    (0x2AA6, "01", ["Central Address Resolution: Supported (0x01)"]),
    (0x2AC9, "00", ["RPA Only: 0"]),
    (0x2B29, "07", ["Features: 0x07 [Robust Caching, Enhanced ATT Bearer, Multiple Handle Value Notifications]"]),
    (0x2B2A, "00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f", ["Hash: 00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f"]),
    (0x2B3A, "01", ["Features: 0x01 [EATT Supported]"]),
]

@Suite("GATT values")
struct GATTValueTests {
    @Test(arguments: gattValueVectors)
    func decodes(uuid: UInt16, hex: String, expected: [String]) {
        #expect(decode(uuid, hex) == expected)
    }

    @Test func everyDecoderHasAVector() {
        let covered = Set(gattValueVectors.map(\.0))
        for uuid in GATTValues.knownUUIDs { #expect(covered.contains(uuid), "0x\(Hex.pad(uuid, 4))") }
        #expect(GATTValues.duplicateUUIDs.isEmpty)
        for required: UInt16 in [0x2A00, 0x2A01, 0x2A04, 0x2AA6, 0x2A19, 0x2A37, 0x2A38, 0x2A23, 0x2A24, 0x2A25, 0x2A26,
                                 0x2A27, 0x2A28, 0x2A29, 0x2A50, 0x2902, 0x2901, 0x2B29, 0x2B3A, 0x2B2A, 0x2A05, 0x2A1C] {
            #expect(GATTValues.hasDecoder(for: BluetoothUUID(uuid16: required)), "0x\(Hex.pad(required, 4))")
        }
    }

    @Test func a128BitFormOfASIGUUIDUsesTheSameDecoder() {
        let long = BluetoothUUID(string: "00002a19-0000-1000-8000-00805f9b34fb") ?? BluetoothUUID(uuid16: 0)
        #expect(S.show("5a") { GATTValues.decode(uuid: long, &$0) }.map { S.render($0) } == ["Level: 90.0 %"])
    }

    @Test func unknownTypesGiveNil() {
        #expect(decode(0x1234, "01") == nil)
        let vendor = BluetoothUUID(string: "6e400001-b5a3-f393-e0a9-e50e24dcca9e") ?? BluetoothUUID(uuid16: 0)
        #expect(S.show("01") { GATTValues.decode(uuid: vendor, &$0) } == nil)
        #expect(!GATTValues.hasDecoder(for: vendor))
    }

    @Test func shortValuesKeepWhatWasReadAndNote() {
        let lines = decode(0x2A37, "11") ?? []
        #expect(lines.first == "Flags: 0x11 [Heart Rate Value Format UINT16, RR-Interval Present]")
        #expect(lines.last?.hasPrefix("Malformed: note: Heart Rate Measurement Value: truncated") == true)
        #expect(decode(0x2A19, "5a 00") == ["Level: 90.0 %", "Trailing Bytes: 00"])
        #expect(decode(0x2902, "") == ["Malformed: note: value: truncated (needs 2 bytes, 0 left) at offset 0"])
    }

    @Test(arguments: [
        (UInt32(0xFF00_016E), "36.6"), (0x0000_0024, "36"), (0x0200_0003, "300"), (0xFEFF_FFFB, "-0.05"),
        (0xFD00_0001, "0.001"), (0x007F_FFFF, "NaN"), (0x0080_0000, "NRes"), (0x007F_FFFE, "+INFINITY"),
        (0x0080_0002, "-INFINITY"), (0x0080_0001, "Reserved"),
    ])
    func ieee11073Floats(raw: UInt32, text: String) {
        #expect(GATTValues.ieee11073Float(raw) == text)
    }

    @Test func characteristicPropertyNames() {
        let (names, unknown) = GATTNames.characteristicProperties.flagNames(0xFF)
        #expect(names == ["Broadcast", "Read", "Write Without Response", "Write", "Notify", "Indicate",
                          "Authenticated Signed Writes", "Extended Properties"])
        #expect(unknown == 0)
    }

    @Test func everyPrefixAndRandomValuesNeverTrap() {
        for (uuid, hex, _) in gattValueVectors {
            let outcomes = S.prefixOutcomes(S.bytes(hex)) { r in
                GATTValues.decode(uuid: BluetoothUUID(uuid16: uuid), &r).map { !S.malformed($0) } ?? false
            }
            #expect(outcomes.last == true, "0x\(String(uuid, radix: 16)) \(hex): the whole vector decodes, \(outcomes)")
        }
        let uuids = GATTValues.knownUUIDs.map(BluetoothUUID.init(uuid16:))
        var o = S.Outcomes()
        S.fuzz(seed: 0x6A77, maxLength: 24) { r in
            for uuid in uuids {
                var copy = r
                o.note(GATTValues.decode(uuid: uuid, &copy).map { !S.malformed($0) } ?? false)
            }
        }
        #expect(o.both, "\(o)")
    }
}
