import BLEBytes

/// One row of the GATT value table (btmon's `gatt_handlers[]`): a 16-bit characteristic,
/// descriptor or declaration UUID and how to show its value.
struct GATTValueEntry: Sendable {
    typealias Decode = @Sendable (inout ByteReader, inout [Field]) throws(DecodeError) -> Void
    let uuid: UInt16
    let name: StaticString
    /// Appends fields as it reads them, so a short value keeps what was read.
    let decode: Decode

    init(_ uuid: UInt16, _ name: StaticString, _ decode: @escaping Decode) {
        (self.uuid, self.name, self.decode) = (uuid, name, decode)
    }

    init(_ uuid: UInt16, _ name: StaticString, params: [Param]) {
        self.init(uuid, name) { r, f throws(DecodeError) in try FieldDecoder.decode(params, &r, into: &f) }
    }
}

/// Decoders for attribute values by type, for display: GATT declarations (Core v5.4 Vol 3 Part G 3),
/// descriptors, and common characteristics of the GATT Specification Supplement.
public enum GATTValues {
    /// Decodes a value of the attribute type `uuid`; nil when no decoder knows the type.
    /// Never throws: a value too short for its type gives the fields read plus a `Malformed` note,
    /// and bytes beyond what the type defines are listed as `Trailing Bytes`.
    public static func decode(uuid: BluetoothUUID, _ r: inout ByteReader) -> [Field]? {
        guard let u = uuid.uuid16, let entry = index[u] else { return nil }
        var fields: [Field] = []
        do {
            try entry.decode(&r, &fields)
            if r.remaining > 0 { fields.append(Field("Trailing Bytes", .bytes(Array(r.rest().bytes)))) }
        } catch {
            fields.append(Field("Malformed", .problem(error)))
        }
        return fields
    }

    /// True when `decode(uuid:_:)` has a decoder for the type.
    public static func hasDecoder(for uuid: BluetoothUUID) -> Bool {
        uuid.uuid16.map { index[$0] != nil } ?? false
    }

    /// The 16-bit UUIDs with a decoder, in table order.
    public static var knownUUIDs: [UInt16] { rows.map(\.uuid) }

    static let rows: [GATTValueEntry] = [
        // Declarations, Core v5.4 Vol 3 Part G 3.1–3.3.
        GATTValueEntry(0x2800, "Primary Service", params: [Param("UUID", .custom(restUUID))]),
        GATTValueEntry(0x2801, "Secondary Service", params: [Param("UUID", .custom(restUUID))]),
        GATTValueEntry(0x2802, "Include") { r, f throws(DecodeError) in
            f.append(Field("Included Service Handle", .integer(UInt64(try r.u16le("Included Service Attribute Handle")), .hex(bytes: 2))))
            f.append(Field("End Group Handle", .integer(UInt64(try r.u16le("End Group Handle")), .hex(bytes: 2))))
            if r.remaining == 2 { f.append(Field("UUID", .text(try r.uuid(width: 2).displayName))) }
        },
        GATTValueEntry(0x2803, "Characteristic", params: [
            Param("Properties", .flags(1, GATTNames.characteristicProperties)),
            Param("Value Handle", .hex(2)),
            Param("UUID", .custom(restUUID)),
        ]),
        // Descriptors, Core v5.4 Vol 3 Part G 3.3.3.
        GATTValueEntry(0x2900, "Characteristic Extended Properties", params: [Param("Properties", .flags(2, GATTNames.extendedProperties))]),
        GATTValueEntry(0x2901, "Characteristic User Description", params: [Param("Description", .custom(utf8Rest))]),
        GATTValueEntry(0x2902, "Client Characteristic Configuration", params: [Param("Configuration", .flags(2, GATTNames.clientCharacteristicConfiguration))]),
        GATTValueEntry(0x2903, "Server Characteristic Configuration", params: [Param("Configuration", .flags(2, NameTable([(0x0001, "Broadcast")])))]),
        // GAP and GATT services, Core v5.4 Vol 3 Part C 12 and Part G 7.
        GATTValueEntry(0x2A00, "Device Name", params: [Param(.deviceName, "Name", .custom(utf8Rest))]),
        GATTValueEntry(0x2A01, "Appearance", params: [Param("Category", .named(2, GATTNames.appearance))]),
        GATTValueEntry(0x2A04, "Peripheral Preferred Connection Parameters", params: [
            Param("Minimum Connection Interval", .scaled(2, factor: 1.25, unit: "msec")),
            Param("Maximum Connection Interval", .scaled(2, factor: 1.25, unit: "msec")),
            Param("Peripheral Latency", .uint(2)),
            Param("Connection Supervision Timeout", .scaled(2, factor: 10, unit: "msec")),
        ]),
        GATTValueEntry(0x2A05, "Service Changed", params: [
            Param("Start Handle", .hex(2)), Param("End Handle", .hex(2)),
        ]),
        GATTValueEntry(0x2AA6, "Central Address Resolution", params: [Param("Central Address Resolution", .named(1, GATTNames.centralAddressResolution))]),
        GATTValueEntry(0x2AC9, "Resolvable Private Address Only", params: [Param("RPA Only", .uint(1))]),
        GATTValueEntry(0x2B29, "Client Supported Features") { r, f throws(DecodeError) in
            f.append(Field("Features", .integer(UInt64(try r.u8("Client Features")), .flags(bytes: 1, GATTNames.clientSupportedFeatures))))
            if r.remaining > 0 { f.append(Field("More Features", .bytes(Array(r.rest().bytes)))) }
        },
        GATTValueEntry(0x2B2A, "Database Hash", params: [Param("Hash", .bytes(16))]),
        GATTValueEntry(0x2B3A, "Server Supported Features") { r, f throws(DecodeError) in
            f.append(Field("Features", .integer(UInt64(try r.u8("Server Features")), .flags(bytes: 1, GATTNames.serverSupportedFeatures))))
            if r.remaining > 0 { f.append(Field("More Features", .bytes(Array(r.rest().bytes)))) }
        },
        // Battery, Tx Power, Device Information, Heart Rate, Health Thermometer services.
        GATTValueEntry(0x2A07, "Tx Power Level", params: [Param("Tx Power", .signed(1, unit: "dBm"))]),
        GATTValueEntry(0x2A19, "Battery Level", params: [Param("Level", .scaled(1, factor: 1, unit: "%"))]),
        GATTValueEntry(0x2A1C, "Temperature Measurement", temperatureMeasurement),
        GATTValueEntry(0x2A1D, "Temperature Type", params: [Param("Type", .named(1, GATTNames.temperatureType))]),
        GATTValueEntry(0x2A23, "System ID", params: [Param("Manufacturer Identifier", .hex(5)), Param("Organizationally Unique Identifier", .hex(3))]),
        GATTValueEntry(0x2A24, "Model Number String", params: [Param("Model Number", .custom(utf8Rest))]),
        GATTValueEntry(0x2A25, "Serial Number String", params: [Param("Serial Number", .custom(utf8Rest))]),
        GATTValueEntry(0x2A26, "Firmware Revision String", params: [Param("Firmware Revision", .custom(utf8Rest))]),
        GATTValueEntry(0x2A27, "Hardware Revision String", params: [Param("Hardware Revision", .custom(utf8Rest))]),
        GATTValueEntry(0x2A28, "Software Revision String", params: [Param("Software Revision", .custom(utf8Rest))]),
        GATTValueEntry(0x2A29, "Manufacturer Name String", params: [Param("Manufacturer Name", .custom(utf8Rest))]),
        GATTValueEntry(0x2A37, "Heart Rate Measurement", heartRateMeasurement),
        GATTValueEntry(0x2A38, "Body Sensor Location", params: [Param("Location", .named(1, GATTNames.bodySensorLocation))]),
        GATTValueEntry(0x2A39, "Heart Rate Control Point", params: [Param("Command", .named(1, NameTable([(1, "Reset Energy Expended")])))]),
        GATTValueEntry(0x2A50, "PnP ID") { r, f throws(DecodeError) in
            let source = try r.u8("Vendor ID Source")
            f.append(Field("Vendor ID Source", .integer(UInt64(source), .named(bytes: 1, GATTNames.vendorIDSource))))
            let vendor = UInt64(try r.u16le("Vendor ID"))
            f.append(Field("Vendor ID", .integer(vendor, source == 1 ? .named(bytes: 2, GATTNames.company) : .hex(bytes: 2))))
            f.append(Field("Product ID", .integer(UInt64(try r.u16le("Product ID")), .hex(bytes: 2))))
            f.append(Field("Product Version", .integer(UInt64(try r.u16le("Product Version")), .hex(bytes: 2))))
        },
    ]

    static let index: [UInt16: GATTValueEntry] = {
        var index: [UInt16: GATTValueEntry] = [:]
        for row in rows where index[row.uuid] == nil { index[row.uuid] = row }
        return index
    }()

    /// UUIDs with more than one row (should be empty; checked by a test).
    public static var duplicateUUIDs: [UInt16] {
        var seen = Set<UInt16>(), dups: [UInt16] = []
        for row in rows where !seen.insert(row.uuid).inserted { dups.append(row.uuid) }
        return dups
    }
}

extension GATTValues {
    /// The Service Changed characteristic (Core v5.4 Vol 3 Part G 7.1).
    public static let serviceChangedUUID = BluetoothUUID(uuid16: 0x2A05)

    /// A Service Changed value: the affected handle range (Start, End), nil unless exactly 4 bytes with a
    /// valid range (Vol 3 Part G 7.1: start ≤ end, never 0).
    public static func serviceChangedRange(_ r: ByteReader) -> ATT.HandleRange? {
        // The same two fields as an ATT request's handle range (Core v5.4 Vol 3 Part G 7.1).
        guard r.remaining == 4, let range = try? ATTLayout.handleRange(r), range.isValid else { return nil }
        return range
    }
}

// Value readers shared by the rows.
extension GATTValues {
    /// The rest as UTF-8 text; trailing NULs (C strings) are dropped. Invalid UTF-8 is repaired.
    @Sendable static func utf8Rest(_ r: inout ByteReader) throws(DecodeError) -> FieldValue {
        let bytes = r.rest().bytes
        var end = bytes.count
        while end > 0, bytes[end &- 1] == 0 { end &-= 1 }   // safe: end > 0
        return .text(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[..<end]), as: UTF8.self))
    }

    /// The rest as a 2- or 16-byte UUID with its SIG name.
    @Sendable static func restUUID(_ r: inout ByteReader) throws(DecodeError) -> FieldValue {
        .text(try ATTDecoding.restUUID(&r, "UUID").displayName)
    }

    /// Heart Rate Measurement (0x2A37), Heart Rate Service 3.1: Flags, Heart Rate Measurement Value
    /// (uint8 or uint16 bpm), Energy Expended (uint16 kJ, optional), RR-Intervals (uint16, 1/1024 s).
    static let heartRateMeasurement: GATTValueEntry.Decode = { r, f throws(DecodeError) in
        let flags = try r.u8("Flags")
        f.append(Field("Flags", .integer(UInt64(flags), .flags(bytes: 1, GATTNames.heartRateFlags))))
        if flags & 0x01 != 0 {
            f.append(Field("Heart Rate", .integer(UInt64(try r.u16le("Heart Rate Measurement Value")), .scaled(bytes: 2, factor: 1, unit: "bpm"))))
        } else {
            f.append(Field("Heart Rate", .integer(UInt64(try r.u8("Heart Rate Measurement Value")), .scaled(bytes: 1, factor: 1, unit: "bpm"))))
        }
        let contact: StaticString = switch flags >> 1 & 0x3 {
        case 2: "Supported, not detected"
        case 3: "Supported, detected"
        default: "Not supported"
        }
        f.append(Field("Sensor Contact", .text(contact.description)))
        if flags & 0x08 != 0 {
            f.append(Field("Energy Expended", .integer(UInt64(try r.u16le("Energy Expended")), .scaled(bytes: 2, factor: 1, unit: "kJ"))))
        }
        if flags & 0x10 != 0 {
            while r.remaining >= 2 {
                f.append(Field("RR-Interval", .integer(UInt64(try r.u16le("RR-Interval")), .scaled(bytes: 2, factor: 1.0 / 1024, unit: "s"))))
            }
        }
    }

    /// Temperature Measurement (0x2A1C), Health Thermometer Service 3.1: Flags, Temperature
    /// (IEEE 11073-20601 FLOAT), Time Stamp (optional), Temperature Type (optional).
    static let temperatureMeasurement: GATTValueEntry.Decode = { r, f throws(DecodeError) in
        let flags = try r.u8("Flags")
        f.append(Field("Flags", .integer(UInt64(flags), .flags(bytes: 1, GATTNames.temperatureFlags))))
        let raw = try r.u32le("Temperature Measurement Value")
        f.append(Field("Temperature", .text(ieee11073Float(raw) + (flags & 0x01 != 0 ? " °F" : " °C"))))
        if flags & 0x02 != 0 {
            let year = try r.u16le("Year"), month = try r.u8("Month"), day = try r.u8("Day")
            let h = try r.u8("Hours"), m = try r.u8("Minutes"), s = try r.u8("Seconds")
            f.append(Field("Time Stamp", .text("\(year)-\(pad2(month))-\(pad2(day)) \(pad2(h)):\(pad2(m)):\(pad2(s))")))
        }
        if flags & 0x04 != 0 {
            f.append(Field("Temperature Type", .integer(UInt64(try r.u8("Temperature Type")), .named(bytes: 1, GATTNames.temperatureType))))
        }
    }

    static func pad2(_ v: UInt8) -> String { v < 10 ? "0\(v)" : "\(v)" }

    /// An IEEE 11073-20601 32-bit FLOAT (8-bit signed exponent, 24-bit signed mantissa) as exact
    /// decimal text, or its special value name.
    public static func ieee11073Float(_ raw: UInt32) -> String {
        let mantissaBits = raw & 0x00FF_FFFF
        switch mantissaBits {
        case 0x7F_FFFF: return "NaN"
        case 0x80_0000: return "NRes"
        case 0x7F_FFFE: return "+INFINITY"
        case 0x80_0002: return "-INFINITY"
        case 0x80_0001: return "Reserved"
        default: break
        }
        let mantissa = Int32(bitPattern: mantissaBits << 8) >> 8     // sign-extend 24 bits
        let exponent = Int(Int8(truncatingIfNeeded: raw >> 24))
        let negative = mantissa < 0
        var digits = String(mantissa.magnitude)
        if exponent >= 0 {
            digits += String(repeating: "0", count: exponent)
        } else {
            let places = -exponent
            if digits.count <= places { digits = String(repeating: "0", count: places - digits.count + 1) + digits }
            digits.insert(".", at: digits.index(digits.endIndex, offsetBy: -places))
        }
        return negative ? "-" + digits : digits
    }
}
