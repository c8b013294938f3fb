import BLEBytes

/// One row of the AD type table: the type, its name, and how to show its data. A decoder appends
/// fields as it reads; an error keeps them and adds a `Malformed` note with the raw data.
struct ADTypeEntry: Sendable {
    typealias Decode = @Sendable (inout ByteReader, inout [Field]) throws(DecodeError) -> Void
    let type: UInt8
    let name: StaticString
    let decode: Decode

    init(_ type: ADType, _ name: StaticString, _ decode: @escaping Decode) {
        (self.type, self.name, self.decode) = (type.rawValue, name, decode)
    }

    init(_ type: ADType, _ name: StaticString, params: [Param]) {
        self.init(type, name) { r, f throws(DecodeError) in try FieldDecoder.decode(params, &r, into: &f) }
    }
}

/// AD type names and value decoders, Core Supplement v11 Part A 1 and Assigned Numbers 2.3.
public enum ADDecoding {
    /// Decodes one AD structure (type byte, then data) into display fields: `Type`, then the
    /// decoded data. Never fails: malformed data gives a `Malformed` note and the raw `Data`.
    public static func decode(_ s: inout ByteReader) -> [Field] {
        guard let type = try? s.u8("AD Type") else { return [] }
        var fields = [Field(.adType, "Type", .integer(UInt64(type), .named(bytes: 1, typeNames)))]
        decodeData(ADType(type), &s, into: &fields)
        return fields
    }

    /// Appends the decoded data of one structure of `type`; consumes all of `s`.
    static func decodeData(_ type: ADType, _ s: inout ByteReader, into fields: inout [Field]) {
        guard let entry = index[type.rawValue] else {
            if s.remaining > 0 { fields.append(Field("Data", .bytes(Array(s.rest().bytes)))) }
            return
        }
        let data = s
        do {
            try entry.decode(&s, &fields)
            if s.remaining > 0 {
                fields.append(Field(.malformed, "Malformed", .note("\(s.remaining) byte\(s.remaining == 1 ? "" : "s") more than \(entry.name) defines")))
                fields.append(Field("Trailing Bytes", raw(type, Array(s.rest().bytes))))
            }
        } catch {
            fields.append(Field(.malformed, "Malformed", .note(error.description)))
            fields.append(Field("Data", raw(type, Array(data.remainingBytes))))
            _ = s.rest()
        }
    }

    /// Types whose data is key material (OOB hashes and randomizers, TK, Broadcast_Code): raw bytes
    /// of a malformed one are still shortened in output.
    static let keyTypes: Set<UInt8> = [0x0E, 0x0F, 0x10, 0x1D, 0x1E, 0x22, 0x23, 0x2D]

    static func raw(_ type: ADType, _ bytes: [UInt8]) -> FieldValue {
        keyTypes.contains(type.rawValue) ? .secret(bytes) : .bytes(bytes)
    }

    public static let typeNames = NameTable([
        (0x01, "Flags"), (0x02, "Incomplete List of 16-bit Service UUIDs"), (0x03, "Complete List of 16-bit Service UUIDs"),
        (0x04, "Incomplete List of 32-bit Service UUIDs"), (0x05, "Complete List of 32-bit Service UUIDs"),
        (0x06, "Incomplete List of 128-bit Service UUIDs"), (0x07, "Complete List of 128-bit Service UUIDs"),
        (0x08, "Shortened Local Name"), (0x09, "Complete Local Name"), (0x0A, "Tx Power Level"),
        (0x0D, "Class of Device"), (0x0E, "Simple Pairing Hash C-192"), (0x0F, "Simple Pairing Randomizer R-192"),
        (0x10, "Device ID / Security Manager TK Value"), (0x11, "Security Manager Out of Band Flags"),
        (0x12, "Peripheral Connection Interval Range"), (0x14, "List of 16-bit Service Solicitation UUIDs"),
        (0x15, "List of 128-bit Service Solicitation UUIDs"), (0x16, "Service Data - 16-bit UUID"),
        (0x17, "Public Target Address"), (0x18, "Random Target Address"), (0x19, "Appearance"),
        (0x1A, "Advertising Interval"), (0x1B, "LE Bluetooth Device Address"), (0x1C, "LE Role"),
        (0x1D, "Simple Pairing Hash C-256"), (0x1E, "Simple Pairing Randomizer R-256"),
        (0x1F, "List of 32-bit Service Solicitation UUIDs"), (0x20, "Service Data - 32-bit UUID"),
        (0x21, "Service Data - 128-bit UUID"), (0x22, "LE Secure Connections Confirmation Value"),
        (0x23, "LE Secure Connections Random Value"), (0x24, "URI"), (0x25, "Indoor Positioning"),
        (0x26, "Transport Discovery Data"), (0x27, "LE Supported Features"), (0x28, "Channel Map Update Indication"),
        (0x29, "PB-ADV"), (0x2A, "Mesh Message"), (0x2B, "Mesh Beacon"), (0x2C, "BIGInfo"), (0x2D, "Broadcast_Code"),
        (0x2E, "Resolvable Set Identifier"), (0x2F, "Advertising Interval - long"), (0x30, "Broadcast_Name"),
        (0x31, "Encrypted Advertising Data"), (0x32, "Periodic Advertising Response Timing Information"),
        (0x34, "Electronic Shelf Label"), (0x3D, "3D Information Data"), (0xFF, "Manufacturer Specific Data"),
    ])

    /// Flags bits, Core Supplement Part A 1.3.
    public static let flagNames = NameTable([
        (0x01, "LE Limited Discoverable Mode"), (0x02, "LE General Discoverable Mode"), (0x04, "BR/EDR Not Supported"),
        (0x08, "Simultaneous LE and BR/EDR (Controller)"), (0x10, "Previously Used (Host)"),
    ])

    /// Security Manager OOB Flags bits, Core Supplement Part A 1.7.
    public static let oobFlagNames = NameTable([
        (0x01, "OOB data present"), (0x02, "LE supported (Host)"), (0x04, "Simultaneous LE and BR/EDR (Host)"),
        (0x08, "Random address"),
    ])

    /// LE Role, Core Supplement Part A 1.17.
    public static let leRoleNames = NameTable([
        (0x00, "Only Peripheral Role supported"), (0x01, "Only Central Role supported"),
        (0x02, "Peripheral and Central Role supported, Peripheral Role preferred for connection establishment"),
        (0x03, "Peripheral and Central Role supported, Central Role preferred for connection establishment"),
    ])

    /// Class of Device Major Service Class bits (bits 13–23), Assigned Numbers 2.8.
    public static let majorServiceClassNames = NameTable([
        (1 << 13, "Limited Discoverable Mode"), (1 << 14, "LE audio"), (1 << 16, "Positioning"), (1 << 17, "Networking"),
        (1 << 18, "Rendering"), (1 << 19, "Capturing"), (1 << 20, "Object Transfer"), (1 << 21, "Audio"),
        (1 << 22, "Telephony"), (1 << 23, "Information"),
    ])

    /// Class of Device Major Device Class (bits 8–12), Assigned Numbers 2.8.
    public static let majorDeviceClassNames = NameTable([
        (0, "Miscellaneous"), (1, "Computer"), (2, "Phone"), (3, "LAN/Network Access Point"), (4, "Audio/Video"),
        (5, "Peripheral"), (6, "Imaging"), (7, "Wearable"), (8, "Toy"), (9, "Health"), (31, "Uncategorized"),
    ])

    static let index = ByteCodeIndex(rows) { $0.type }

    /// AD types with a decoder, in table order.
    public static var knownTypes: [ADType] { rows.map { ADType($0.type) } }
    /// Types with more than one row (should be empty; checked by a test).
    public static var duplicateTypes: [UInt8] { index.duplicateCodes }
}
