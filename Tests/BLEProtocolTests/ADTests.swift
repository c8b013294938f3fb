import Testing
import BLEBytes
@testable import BLEProtocol

private typealias S = ATTTestSupport
/// Nordic UART Service 6e400001-b5a3-f393-e0a9-e50e24dcca9e, little-endian on the wire.
private let nusWire = "9e ca dc 24 0e e5 a9 e0 93 f3 a3 b5 01 00 40 6e"
private let key16 = "00 11 22 33 44 55 66 77 88 99 aa bb cc dd ee ff"
/// An iBeacon proximity UUID, big-endian as iBeacon carries it: e2c56db5-dffb-48d2-b060-d0f5a71096e0.
private let beaconUUID = "e2 c5 6d b5 df fb 48 d2 b0 60 d0 f5 a7 10 96 e0"

private func structure(_ hex: String) -> [String] {
    S.render(S.show(hex) { ADDecoding.decode(&$0) })
}

/// One AD structure per vector: type byte, then data (the Length byte is not part of it).
let adVectors: [(String, [String])] = [
    ("01 06", ["Type: Flags (0x01)", "Flags: 0x06 [LE General Discoverable Mode, BR/EDR Not Supported]"]),
    ("01 1f", ["Type: Flags (0x01)", "Flags: 0x1f [LE Limited Discoverable Mode, LE General Discoverable Mode, BR/EDR Not Supported, "
               + "Simultaneous LE and BR/EDR (Controller), Previously Used (Host)]"]),
    ("02 0d 18 0f 18", ["Type: Incomplete List of 16-bit Service UUIDs (0x02)", "UUID: Heart Rate (0x180D)", "UUID: Battery Service (0x180F)"]),
    ("03 0a 18", ["Type: Complete List of 16-bit Service UUIDs (0x03)", "UUID: Device Information (0x180A)"]),
    ("04 78 56 34 12", ["Type: Incomplete List of 32-bit Service UUIDs (0x04)", "UUID: 0x12345678"]),
    ("05 0d 18 00 00", ["Type: Complete List of 32-bit Service UUIDs (0x05)", "UUID: Heart Rate (0x0000180D)"]),
    ("06 " + nusWire, ["Type: Incomplete List of 128-bit Service UUIDs (0x06)", "UUID: Nordic UART Service (6e400001-b5a3-f393-e0a9-e50e24dcca9e)"]),
    ("07 " + nusWire, ["Type: Complete List of 128-bit Service UUIDs (0x07)", "UUID: Nordic UART Service (6e400001-b5a3-f393-e0a9-e50e24dcca9e)"]),
    ("08 48 52", ["Type: Shortened Local Name (0x08)", "Name: HR"]),
    ("09 48 52 4d 20 31", ["Type: Complete Local Name (0x09)", "Name: HRM 1"]),
    ("0a f4", ["Type: Tx Power Level (0x0a)", "TX Power: -12 dBm"]),
    // Class of Device 0x240404: Rendering|Audio, Audio/Video, minor 1
    ("0d 04 04 24", ["Type: Class of Device (0x0d)", "Class: 0x240404", "Major Service Classes: 0x240000 [Rendering, Audio]",
                     "Major Device Class: Audio/Video (0x04)", "Minor Device Class: 0x01"]),
    ("0e " + key16, ["Type: Simple Pairing Hash C-192 (0x0e)", "Hash C: <secret 16 bytes>"]),
    ("0f " + key16, ["Type: Simple Pairing Randomizer R-192 (0x0f)", "Randomizer R: <secret 16 bytes>"]),
    ("10 " + key16, ["Type: Device ID / Security Manager TK Value (0x10)", "TK Value: <secret 16 bytes>"]),
    // Device ID: SIG source, Nordic, product 0x0001, version 0x0010
    ("10 01 00 59 00 01 00 10 00", ["Type: Device ID / Security Manager TK Value (0x10)", "Vendor ID Source: Bluetooth SIG (0x0001)",
                                    "Vendor ID: Nordic Semiconductor ASA (0x0059)", "Product ID: 0x0001", "Version: 0x0010"]),
    ("11 03", ["Type: Security Manager Out of Band Flags (0x11)", "Flags: 0x03 [OOB data present, LE supported (Host)]"]),
    // 7.5 ms … 4 s
    ("12 06 00 80 0c", ["Type: Peripheral Connection Interval Range (0x12)", "Min Interval: 7.5 msec", "Max Interval: 4000.0 msec"]),
    ("14 0d 18", ["Type: List of 16-bit Service Solicitation UUIDs (0x14)", "UUID: Heart Rate (0x180D)"]),
    ("15 " + nusWire, ["Type: List of 128-bit Service Solicitation UUIDs (0x15)", "UUID: Nordic UART Service (6e400001-b5a3-f393-e0a9-e50e24dcca9e)"]),
    ("16 0f 18 5a", ["Type: Service Data - 16-bit UUID (0x16)", "UUID: Battery Service (0x180F)", "Data: 5a"]),
    ("17 06 05 04 03 02 01", ["Type: Public Target Address (0x17)", "Address: 01:02:03:04:05:06"]),
    ("18 06 05 04 03 02 c1 16 15 14 13 12 d1", ["Type: Random Target Address (0x18)", "Address: C1:02:03:04:05:06", "Address: D1:12:13:14:15:16"]),
    ("19 41 03", ["Type: Appearance (0x19)", "Appearance: Heart Rate Sensor: Heart Rate Belt (0x0341)"]),
    ("1a 40 06", ["Type: Advertising Interval (0x1a)", "Interval: 1000.0 msec"]),
    ("1b 06 05 04 03 02 c1 01", ["Type: LE Bluetooth Device Address (0x1b)", "Address: C1:02:03:04:05:06 (Random)"]),
    ("1c 02", ["Type: LE Role (0x1c)",
               "Role: Peripheral and Central Role supported, Peripheral Role preferred for connection establishment (0x02)"]),
    ("1d " + key16, ["Type: Simple Pairing Hash C-256 (0x1d)", "Hash C: <secret 16 bytes>"]),
    ("1e " + key16, ["Type: Simple Pairing Randomizer R-256 (0x1e)", "Randomizer R: <secret 16 bytes>"]),
    ("1f 78 56 34 12", ["Type: List of 32-bit Service Solicitation UUIDs (0x1f)", "UUID: 0x12345678"]),
    ("20 78 56 34 12 aa", ["Type: Service Data - 32-bit UUID (0x20)", "UUID: 0x12345678", "Data: aa"]),
    ("21 " + nusWire + " aa bb", ["Type: Service Data - 128-bit UUID (0x21)",
                                  "UUID: Nordic UART Service (6e400001-b5a3-f393-e0a9-e50e24dcca9e)", "Data: aa bb"]),
    ("22 " + key16, ["Type: LE Secure Connections Confirmation Value (0x22)", "Confirmation Value: <secret 16 bytes>"]),
    ("23 " + key16, ["Type: LE Secure Connections Random Value (0x23)", "Random Value: <secret 16 bytes>"]),
    // URI: scheme U+0017 "https:", then //example.com
    ("24 17 2f 2f 65 78 61 6d 70 6c 65 2e 63 6f 6d", ["Type: URI (0x24)", "URI: https://example.com"]),
    // URI: U+0001 (no scheme), the whole URI as text
    ("24 01 61 62 3a 63", ["Type: URI (0x24)", "URI: ab:c"]),
    // URI: U+0080 (two UTF-8 bytes) "itms:"
    ("24 c2 80 2f 2f 78", ["Type: URI (0x24)", "URI: itms://x"]),
    ("25 01 02", ["Type: Indoor Positioning (0x25)", "Data: 01 02"]),
    ("26 01 02", ["Type: Transport Discovery Data (0x26)", "Data: 01 02"]),
    ("27 ff 0f", ["Type: LE Supported Features (0x27)", "Features: ff 0f"]),
    ("28 01", ["Type: Channel Map Update Indication (0x28)", "Data: 01"]),
    ("29 01", ["Type: PB-ADV (0x29)", "Data: 01"]),
    ("2a 01", ["Type: Mesh Message (0x2a)", "Data: 01"]),
    ("2b 01", ["Type: Mesh Beacon (0x2b)", "Data: 01"]),
    ("2c 01", ["Type: BIGInfo (0x2c)", "Data: 01"]),
    ("2d " + key16, ["Type: Broadcast_Code (0x2d)", "Broadcast Code: <secret 16 bytes>"]),
    ("2e 01 02 03 04 05 06", ["Type: Resolvable Set Identifier (0x2e)", "RSI: 01 02 03 04 05 06"]),
    ("2f 80 0c 00", ["Type: Advertising Interval - long (0x2f)", "Interval: 2000.0 msec"]),
    ("30 4d 79 20 42 72 6f 61 64 63 61 73 74", ["Type: Broadcast_Name (0x30)", "Name: My Broadcast"]),
    ("31 01", ["Type: Encrypted Advertising Data (0x31)", "Data: 01"]),
    ("32 01", ["Type: Periodic Advertising Response Timing Information (0x32)", "Data: 01"]),
    ("34 01", ["Type: Electronic Shelf Label (0x34)", "Data: 01"]),
    ("3d 01", ["Type: 3D Information Data (0x3d)", "Data: 01"]),
    // iBeacon: UUID e2c56db5-…, major 1, minor 2, measured power -59 dBm
    ("ff 4c 00 02 15 " + beaconUUID + " 00 01 00 02 c5", ["Type: Manufacturer Specific Data (0xff)", "Company: Apple, Inc. (0x004c)",
        "iBeacon:", "  UUID: e2c56db5-dffb-48d2-b060-d0f5a71096e0", "  Major: 1", "  Minor: 2", "  Measured Power: -59 dBm"]),
    ("ff 06 00 01 09 20 02", ["Type: Manufacturer Specific Data (0xff)", "Company: Microsoft (0x0006)", "Data: 01 09 20 02"]),
    ("ff 4c 00 10 05 01", ["Type: Manufacturer Specific Data (0xff)", "Company: Apple, Inc. (0x004c)", "Data: 10 05 01"]),
    // Eddystone-UID: TX -25 dBm, namespace 00…09, instance 0a…0f
    ("16 aa fe 00 e7 00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f", ["Type: Service Data - 16-bit UUID (0x16)",
        "UUID: Eddystone (Google LLC) (0xFEAA)", "Eddystone:", "  Frame: UID (0x00)", "  TX Power at 0 m: -25 dBm",
        "  Namespace: 00 01 02 03 04 05 06 07 08 09", "  Instance: 0a 0b 0c 0d 0e 0f"]),
    // Eddystone-URL: TX -21 dBm, https:// + "google" + .com
    ("16 aa fe 10 eb 03 67 6f 6f 67 6c 65 07", ["Type: Service Data - 16-bit UUID (0x16)", "UUID: Eddystone (Google LLC) (0xFEAA)",
        "Eddystone:", "  Frame: URL (0x10)", "  TX Power at 0 m: -21 dBm", "  URL: https://google.com"]),
    // Eddystone-URL: http://www. + "abc" + .org/ + "x"
    ("16 aa fe 10 00 00 61 62 63 01 78", ["Type: Service Data - 16-bit UUID (0x16)", "UUID: Eddystone (Google LLC) (0xFEAA)",
        "Eddystone:", "  Frame: URL (0x10)", "  TX Power at 0 m: 0 dBm", "  URL: http://www.abc.org/x"]),
    // Eddystone-TLM: 3000 mV, 23.50 °C, 256 PDUs, 10 s
    ("16 aa fe 20 00 0b b8 17 80 00 00 01 00 00 00 00 64", ["Type: Service Data - 16-bit UUID (0x16)",
        "UUID: Eddystone (Google LLC) (0xFEAA)", "Eddystone:", "  Frame: TLM (0x20)", "  Version: 0x00",
        "  Battery Voltage: 3000.0 mV", "  Temperature: 23.50 °C", "  Advertising PDU Count: 256", "  Time Since Power-On: 10.0 s"]),
    ("16 aa fe 20 01 00 01 02 03 04 05 06 07 08 09 0a 0b 12 34 56 78", ["Type: Service Data - 16-bit UUID (0x16)",
        "UUID: Eddystone (Google LLC) (0xFEAA)", "Eddystone:", "  Frame: TLM (0x20)", "  Version: 0x01",
        "  Encrypted TLM: 00 01 02 03 04 05 06 07 08 09 0a 0b", "  Salt: 0x1234", "  MIC: 0x5678"]),
    ("16 aa fe 30 f0 01 02 03 04 05 06 07 08", ["Type: Service Data - 16-bit UUID (0x16)", "UUID: Eddystone (Google LLC) (0xFEAA)",
        "Eddystone:", "  Frame: EID (0x30)", "  TX Power at 0 m: -16 dBm", "  EID: 01 02 03 04 05 06 07 08"]),
    ("16 aa fe 40 01", ["Type: Service Data - 16-bit UUID (0x16)", "UUID: Eddystone (Google LLC) (0xFEAA)",
        "Eddystone:", "  Frame: Unknown (0x40)", "  Data: 01"]),
    ("99 01 02", ["Type: Unknown (0x99)", "Data: 01 02"]),
]

/// Malformed structures: a note, the raw data kept, never an error for the frame.
let adMalformed: [(String, String)] = [
    ("03 0d 18 0f", "UUID list: length 2 declared, 3 present"),
    ("07 01 02 03", "UUID list: length 16 declared, 3 present"),
    ("17 06 05 04 03", "Target Address: length 6 declared, 4 present"),
    ("0a f4 00", "1 byte more than Tx Power Level defines"),
    ("1b 06 05 04", "Device Address: truncated"),
    ("24 ff 61", "URI Scheme: invalid value 0xff"),
    ("16 aa fe 10 eb 09 61", "URL Scheme: invalid value 0x9"),
    ("16 aa fe 00 e7 00 01", "Namespace: truncated"),
    ("ff 4c 00 02 15 01 02", "iBeacon: length 23 declared, 4 present"),
    ("10 01 02 03", "TK Value: length 16 declared, 3 present"),
    ("2f 80 0c", "Advertising Interval: length 4 declared, 2 present"),
    ("19 41", "value: truncated"),
]

@Suite("AD")
struct ADTests {
    @Test(arguments: adVectors)
    func decodesEveryType(hex: String, expected: [String]) {
        #expect(structure(hex) == expected)
    }

    @Test func everyNamedTypeHasADecoderAndAVector() {
        let covered = Set(adVectors.compactMap { S.bytes($0.0).first })
        for type in ADDecoding.knownTypes { #expect(covered.contains(type.rawValue), "\(type)") }
        for (code, _) in ADDecoding.typeNames.entries { #expect(ADDecoding.index[UInt8(code)] != nil, "0x\(String(code, radix: 16))") }
        #expect(ADDecoding.duplicateTypes.isEmpty)
        #expect(ADType.completeLocalName.description == "Complete Local Name (0x09)")
    }

    @Test(arguments: adMalformed)
    func malformedIsANoteWithTheRawData(hex: String, note: String) {
        let fields = S.show(hex) { ADDecoding.decode(&$0) }
        let lines = S.render(fields)
        #expect(lines.contains { $0.hasPrefix("Malformed: note: ") && $0.contains(note) }, "\(lines)")
        let raw = lines.last ?? ""
        #expect(raw.hasPrefix("Data: ") || raw.hasPrefix("Trailing Bytes: "), "\(lines)")
    }

    @Test func malformedKeyMaterialStaysSecret() {
        let lines = structure("0e 00 11 22")
        #expect(lines.last == "Data: <secret 3 bytes>")
    }

    @Test func structuresStopAtPaddingAndContinuePastABadOne() {
        // Flags 0x06; complete 16-bit list [Heart Rate]; complete name "HRM1"; zero padding
        let list = S.show("02 01 06 03 03 0d 18 05 09 48 52 4d 31 00 00 00") { ADFieldSpec.structures(&$0) }
        guard case let .list(items) = list else { Issue.record("not a list"); return }
        #expect(items.count == 3)
        #expect(S.render(items[2]) == ["Type: Complete Local Name (0x09)", "Name: HRM1"])
        // A UUID list of 3 bytes, then Flags: the bad structure is noted, the next one decoded.
        let bad = S.show("04 03 0d 18 0f 02 01 06") { ADFieldSpec.structures(&$0) }
        guard case let .list(badItems) = bad else { Issue.record("not a list"); return }
        #expect(badItems.count == 2)
        #expect(S.has(badItems[0], "Malformed"))
        #expect(S.render(badItems[1]).last == "Flags: 0x06 [LE General Discoverable Mode, BR/EDR Not Supported]")
        // A length that runs past the data: kept raw with a note.
        let past = S.show("02 01 06 05 09 48 52") { ADFieldSpec.structures(&$0) }
        guard case let .list(pastItems) = past else { Issue.record("not a list"); return }
        #expect(pastItems.count == 2)
        #expect(S.render(pastItems[1]) == ["Malformed: note: AD structure length 5 runs past the data (3 left)", "Data: 05 09 48 52"])
    }

    @Test func lengthPrefixedReadsItsLength() {
        let result = S.run("03 02 01 06 ff") { r throws(DecodeError) in try ADFieldSpec.lengthPrefixed(&r) }
        guard case let .success(.list(items)) = result else { Issue.record("no list"); return }
        #expect(items.count == 1)
        #expect(S.run("05 02 01") { r throws(DecodeError) in try ADFieldSpec.lengthPrefixed(&r) }
                .map { _ in 0 } == .failure(DecodeError(kind: .truncated(needed: 5, available: 2), offset: 1, field: "")))
    }

    @Test func uriSchemes() {
        #expect(AD.uriScheme(0x01) == "")
        #expect(AD.uriScheme(0x16) == "http:")
        #expect(AD.uriScheme(0x17) == "https:")
        #expect(AD.uriScheme(0xBC) == "bl:")
        #expect(AD.uriScheme(0xBD) == nil)
        #expect(AD.uriScheme(0) == nil)
        #expect(structure("24 e0 a0 80 61") == ["Type: URI (0x24)", "URI: \\u{800}a"])
    }
}

@Suite("AdvertisingData")
struct AdvertisingDataTests {
    static func parse(_ hex: String) -> AdvertisingData {
        S.show(hex) { AdvertisingData.parse($0) }
    }

    @Test func typicalPeripheral() {
        // Flags 0x06; complete 16-bit [Heart Rate, Battery]; name "HRM"; TX 4 dBm; appearance 0x0341;
        // Nordic manufacturer data 01; Battery service data 5a — 31 bytes
        let ad = Self.parse("02 01 06 05 03 0d 18 0f 18 04 09 48 52 4d 02 0a 04 03 19 41 03 04 ff 59 00 01 04 16 0f 18 5a")
        #expect(ad.flags == 0x06)
        #expect(ad.services == [BluetoothUUID(uuid16: 0x180D), BluetoothUUID(uuid16: 0x180F)])
        #expect(ad.servicesComplete)
        #expect(ad.completeName == "HRM" && ad.name == "HRM" && ad.shortName == nil)
        #expect(ad.txPower == 4)
        #expect(ad.appearance == 0x0341)
        #expect(ad.manufacturer == [.init(company: 0x0059, data: [1])])
        #expect(ad.manufacturer.first?.companyName == "Nordic Semiconductor ASA")
        #expect(ad.serviceData == [.init(uuid: BluetoothUUID(uuid16: 0x180F), data: [0x5A])])
        #expect(ad.types.map(\.rawValue) == [0x01, 0x03, 0x09, 0x0A, 0x19, 0xFF, 0x16])
        #expect(ad.length == 31 && !ad.oversizeForLegacy)
        #expect(ad.malformed.isEmpty)
        #expect(ad.iBeacon == nil && ad.eddystone == nil)
    }

    @Test func iBeacon() {
        let ad = Self.parse("02 01 06 1a ff 4c 00 02 15 " + beaconUUID + " 00 01 00 02 c5")
        #expect(ad.iBeacon == AD.IBeacon(uuid: BluetoothUUID(string: "e2c56db5-dffb-48d2-b060-d0f5a71096e0") ?? BluetoothUUID(uuid16: 0),
                                         major: 1, minor: 2, measuredPower: -59))
        #expect(ad.length == 30)
    }

    @Test func eddystoneAndURI() {
        let ad = Self.parse("03 03 aa fe 0d 16 aa fe 10 eb 03 67 6f 6f 67 6c 65 07 0f 24 17 2f 2f 65 78 61 6d 70 6c 65 2e 63 6f 6d")
        #expect(ad.eddystone == .url(txPower: -21, url: "https://google.com"))
        #expect(ad.uri == "https://example.com")
        #expect(ad.services == [BluetoothUUID(uuid16: 0xFEAA)])
    }

    @Test func oversizeAndPadding() {
        let name = Array(repeating: "41", count: 38).joined(separator: " ")
        let ad = Self.parse("27 09 " + name)
        #expect(ad.length == 40 && ad.oversizeForLegacy)
        #expect(ad.completeName?.count == 38)
        let padded = Self.parse("02 01 06 00 00 00 00 00")
        #expect(padded.length == 3 && padded.flags == 6)
    }

    @Test func malformedStructuresAreListedAndParsingContinues() {
        let ad = Self.parse("04 03 0d 18 0f 03 19 41 03 05 09 48 52")
        #expect(ad.malformed.count == 2)
        #expect(ad.malformed[0].hasPrefix("Complete List of 16-bit Service UUIDs (0x03): UUID list"))
        #expect(ad.malformed[1] == "AD structure length 5 runs past the data (3 left)")
        #expect(ad.appearance == 0x0341)
        #expect(ad.length == 9)
    }

    @Test func mergeAScanResponse() {
        var ad = Self.parse("02 01 06 03 03 0d 18")
        ad.merge(Self.parse("05 08 48 52 4d 31 02 0a 00"))
        #expect(ad.flags == 6 && ad.shortName == "HRM1" && ad.txPower == 0)
        #expect(ad.services == [BluetoothUUID(uuid16: 0x180D)])
    }
}

@Suite("AD robustness")
struct ADRobustnessTests {
    static func malformed(_ fields: [Field]) -> Bool { S.malformed(fields) }

    /// Every prefix never traps; as advertising data, a structure whose Length claims more than the
    /// prefix holds is malformed (each strict prefix of `Length + structure`) and the whole one is not
    /// (valid vectors).
    @Test func everyPrefixOfEveryVector() {
        for (hex, _) in adVectors + adMalformed.map({ ($0.0, []) }) {
            let bytes = S.bytes(hex)
            S.prefixes(bytes) { r in _ = ADDecoding.decode(&r) }
            // As a whole AD structure with a correct Length, and as raw advertising data.
            let framed = [UInt8(bytes.count)] + bytes
            let fields = S.prefixOutcomes(framed) { r in !Self.malformed([Field("AD", ADFieldSpec.structures(&r))]) }
            let parsed = S.prefixOutcomes(framed) { r in AdvertisingData.parse(r).malformed.isEmpty }
            // Prefixes 2…count-1 cut the structure its Length announces.
            for n in 2 ..< framed.count {
                #expect(!fields[n] && !parsed[n], "\(hex): a prefix of \(n) bytes cuts the structure")
            }
        }
        for (hex, _) in adVectors {
            let framed = [UInt8(S.bytes(hex).count)] + S.bytes(hex)
            #expect(S.show(framed) { AdvertisingData.parse($0).malformed.isEmpty }, "\(hex)")
        }
    }

    @Test func randomStructures() {
        let leads = ADDecoding.knownTypes.map(\.rawValue)
        let o = S.fuzzOutcomes(seed: 0xAD0, maxLength: 40, leads: leads) { r in !Self.malformed(ADDecoding.decode(&r)) }
        #expect(o.both, "\(o)")
    }

    @Test func randomAdvertisingData() {
        var parsed = S.Outcomes()
        var disagree = 0
        let fields = S.fuzzOutcomes(seed: 0xAD1, maxLength: 64) { r in
            let framed = AdvertisingData.parse(r).malformed.isEmpty
            parsed.note(framed)
            let clean = !Self.malformed([Field("AD", ADFieldSpec.structures(&r))])
            if clean && !framed { disagree += 1 }
            return clean
        }
        // What the display reader finds clean the parser finds well framed too (the display reader
        // also marks values malformed inside well-framed structures: it may refuse more).
        #expect(parsed.both && fields.both && disagree == 0, "parse \(parsed); fields \(fields); \(disagree) clean but not framed")
    }

    /// Random data built from well-formed structure headers with random types and bodies.
    @Test func randomWellFramedAdvertisingData() {
        var rng = ATTTestSplitMix64(seed: 0xAD2)
        let leads = ADDecoding.knownTypes.map(\.rawValue)
        var miscounted = 0
        for _ in 0..<10_000 {
            var data: [UInt8] = []
            var structures = 0
            while data.count < 31 {
                let n = Int(rng.next() % 12)
                data.append(UInt8(n + 1))
                data.append(leads[Int(rng.next() % UInt64(leads.count))])
                for _ in 0..<n { data.append(UInt8(truncatingIfNeeded: rng.next())) }
                structures += 1
            }
            let items = S.show(data) { r -> Int in
                _ = AdvertisingData.parse(r)
                guard case let .list(items) = ADFieldSpec.structures(&r) else { return -1 }
                return items.count
            }
            // Every structure is read, and no framing problem is added after them.
            if items != structures { miscounted += 1 }
        }
        #expect(miscounted == 0)
    }
}
