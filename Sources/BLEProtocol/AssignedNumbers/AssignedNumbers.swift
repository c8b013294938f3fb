// Hand-written accessors over the generated tables in this folder
// (AssignedNumbers*Table.swift, made by scripts/gen_assigned_numbers.py).
//
// The tables are kept as one raw string literal each (`hex<TAB>…<TAB>name` lines)
// because Swift type-checks large dictionary literals very slowly. Each is
// parsed once, on first use, into a dictionary held in a `static let` (Swift
// initialises those lazily and thread-safely).

/// Names from the Bluetooth SIG Assigned Numbers document (generated tables).
public enum AssignedNumbers {
    public enum UUIDCategory: Sendable, Equatable {
        case service, characteristic, descriptor, unit, declaration, memberService, other
    }

    /// Name of a SIG 16-bit UUID of any category, e.g. 0x2A37 -> "Heart Rate Measurement".
    ///
    /// Member-service UUIDs (0xFCxx–0xFExx, SDO 0xFFFx) are named after the company
    /// that registered them. `.other` covers the SDP protocol / service-class UUIDs.
    public static func uuid16Name(_ value: UInt16) -> String? {
        uuid16Table[value]?.name
    }

    public static func uuid16Category(_ value: UInt16) -> UUIDCategory? {
        uuid16Table[value]?.category
    }

    /// Company identifier name, e.g. 0x004C -> "Apple, Inc.", 0x0059 -> "Nordic Semiconductor ASA".
    public static func companyName(_ id: UInt16) -> String? {
        companyTable[id]
    }

    /// Appearance name (Core Supplement / Assigned Numbers 2.6), e.g. 0x0341 ->
    /// "Heart Rate Sensor: Heart Rate Belt", 0x0340 -> "Heart Rate Sensor".
    /// A subcategory missing from the table under a known category gives
    /// "Category (subcategory N)"; nil if the category is unknown.
    public static func appearanceName(_ value: UInt16) -> String? {
        if let name = appearanceTable[value] {
            return name
        }
        guard let category = appearanceTable[value & ~0x3F] else {
            return nil
        }
        return "\(category) (subcategory \(value & 0x3F))"
    }

    /// Name of a well-known 128-bit UUID given as 16 bytes big-endian (display order); nil if unknown.
    ///
    /// A UUID built on the Bluetooth Base UUID (`0000xxxx-0000-1000-8000-00805F9B34FB`)
    /// is looked up as the 16-bit UUID `xxxx`.
    public static func uuid128Name(_ bytesBigEndian: [UInt8]) -> String? {
        guard bytesBigEndian.count == 16 else {
            return nil
        }
        if bytesBigEndian[0] == 0, bytesBigEndian[1] == 0,
           bytesBigEndian[4...].elementsEqual(bluetoothBaseUUIDTail) {
            return uuid16Name(UInt16(bytesBigEndian[2]) << 8 | UInt16(bytesBigEndian[3]))
        }
        return uuid128Table[hexString(bytesBigEndian)]
    }
}

/// Holder of the generated raw table text; each generated file adds one `static let`.
enum AssignedNumbersTables {}

extension AssignedNumbers {
    struct UUID16Entry: Sendable {
        let category: UUIDCategory
        let name: String
    }

    /// Bytes 4…15 of the Bluetooth Base UUID 00000000-0000-1000-8000-00805F9B34FB.
    private static let bluetoothBaseUUIDTail: [UInt8] = [
        0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0x80, 0x5F, 0x9B, 0x34, 0xFB,
    ]

    static let uuid16Table: [UInt16: UUID16Entry] = {
        var table: [UInt16: UUID16Entry] = [:]
        forEachLine(AssignedNumbersTables.uuid16Text, fields: 3) { fields in
            guard let key = UInt16(fields[0], radix: 16),
                  let category = category(letter: fields[1]) else {
                assertionFailure("bad uuid16 table line: \(fields)")
                return
            }
            table[key] = UUID16Entry(category: category, name: String(fields[2]))
        }
        return table
    }()

    static let companyTable: [UInt16: String] = parseUInt16Table(AssignedNumbersTables.companyText)

    static let appearanceTable: [UInt16: String] = parseUInt16Table(AssignedNumbersTables.appearanceText)

    static let uuid128Table: [String: String] = {
        var table: [String: String] = [:]
        forEachLine(AssignedNumbersTables.uuid128Text, fields: 2) { fields in
            table[String(fields[0])] = String(fields[1])
        }
        return table
    }()

    private static func category(letter: Substring) -> UUIDCategory? {
        switch letter {
        case "s": .service
        case "c": .characteristic
        case "d": .descriptor
        case "u": .unit
        case "x": .declaration
        case "m": .memberService
        case "o": .other
        default: nil
        }
    }

    private static func parseUInt16Table(_ text: String) -> [UInt16: String] {
        var table: [UInt16: String] = [:]
        forEachLine(text, fields: 2) { fields in
            guard let key = UInt16(fields[0], radix: 16) else {
                assertionFailure("bad table line: \(fields)")
                return
            }
            table[key] = String(fields[1])
        }
        return table
    }

    /// Calls `body` with the tab-separated fields of each non-empty line; the last
    /// field takes the rest of the line. Lines with fewer fields are skipped.
    ///
    /// Splits on the UTF-8 bytes of newline and tab (ASCII: never part of a multi-byte character;
    /// the tables have no CR): splitting by Character cost ~17,000 instructions per line, ~20 M
    /// instructions for the 16-bit UUID table, which every analysis that names an attribute reads.
    private static func forEachLine(_ text: String, fields count: Int, _ body: ([Substring]) -> Void) {
        let utf8 = text.utf8
        var lineStart = utf8.startIndex
        while lineStart < utf8.endIndex {
            let lineEnd = utf8[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? utf8.endIndex
            if lineStart < lineEnd {
                var fields: [Substring] = []
                var fieldStart = lineStart
                while fields.count < count - 1, let tab = utf8[fieldStart ..< lineEnd].firstIndex(of: UInt8(ascii: "\t")) {
                    fields.append(text[fieldStart ..< tab])
                    fieldStart = utf8.index(after: tab)
                }
                fields.append(text[fieldStart ..< lineEnd])
                if fields.count == count {
                    body(fields)
                } else {
                    assertionFailure("bad table line: \(text[lineStart ..< lineEnd])")
                }
            }
            lineStart = lineEnd == utf8.endIndex ? lineEnd : utf8.index(after: lineEnd)
        }
    }

    private static func hexString(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
