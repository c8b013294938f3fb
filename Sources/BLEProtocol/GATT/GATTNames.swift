import BLEBytes

/// Name tables for GATT values, Core v5.4 Vol 3 Part G and the GATT Specification Supplement.
public enum GATTNames {
    /// Characteristic Properties bits, Core v5.4 Vol 3 Part G 3.3.1.1.
    public static let characteristicProperties = NameTable([
        (0x01, "Broadcast"), (0x02, "Read"), (0x04, "Write Without Response"), (0x08, "Write"),
        (0x10, "Notify"), (0x20, "Indicate"), (0x40, "Authenticated Signed Writes"), (0x80, "Extended Properties"),
    ])

    /// Characteristic Extended Properties bits, Core v5.4 Vol 3 Part G 3.3.3.1.
    public static let extendedProperties = NameTable([(0x0001, "Reliable Write"), (0x0002, "Writable Auxiliaries")])

    /// Client Characteristic Configuration bits, Core v5.4 Vol 3 Part G 3.3.3.3.
    public static let clientCharacteristicConfiguration = NameTable([(0x0001, "Notification"), (0x0002, "Indication")])

    /// Client Supported Features, octet 0, Core v5.4 Vol 3 Part G 7.2.
    public static let clientSupportedFeatures = NameTable([
        (0x01, "Robust Caching"), (0x02, "Enhanced ATT Bearer"), (0x04, "Multiple Handle Value Notifications"),
    ])

    /// Server Supported Features, octet 0, Core v5.4 Vol 3 Part G 7.4.
    public static let serverSupportedFeatures = NameTable([(0x01, "EATT Supported")])

    /// Body Sensor Location (0x2A38), Heart Rate Service.
    public static let bodySensorLocation = NameTable([
        (0, "Other"), (1, "Chest"), (2, "Wrist"), (3, "Finger"), (4, "Hand"), (5, "Ear Lobe"), (6, "Foot"),
    ])

    /// Heart Rate Measurement flags (0x2A37). Bits 1–2 are the Sensor Contact Status: bit 2 set
    /// means supported, bit 1 then means contact detected.
    public static let heartRateFlags = NameTable([
        (0x01, "Heart Rate Value Format UINT16"), (0x02, "Sensor Contact Detected"), (0x04, "Sensor Contact Supported"),
        (0x08, "Energy Expended Present"), (0x10, "RR-Interval Present"),
    ])

    /// Temperature Measurement flags (0x2A1C).
    public static let temperatureFlags = NameTable([
        (0x01, "Fahrenheit"), (0x02, "Time Stamp Present"), (0x04, "Temperature Type Present"),
    ])

    /// Temperature Type (0x2A1D), Health Thermometer Service.
    public static let temperatureType = NameTable([
        (1, "Armpit"), (2, "Body (general)"), (3, "Ear"), (4, "Finger"), (5, "Gastro-intestinal Tract"),
        (6, "Mouth"), (7, "Rectum"), (8, "Toe"), (9, "Tympanum"),
    ])

    /// PnP ID Vendor ID Source (0x2A50).
    public static let vendorIDSource = NameTable([(1, "Bluetooth SIG"), (2, "USB Implementer's Forum")])

    /// Central Address Resolution (0x2AA6).
    public static let centralAddressResolution = NameTable([(0, "Not supported"), (1, "Supported")])

    /// Appearance values by name from Assigned Numbers.
    public static let appearance = NameTable([], fallback: { AssignedNumbers.appearanceName(UInt16(truncatingIfNeeded: $0)) })

    /// Company identifiers by name from Assigned Numbers.
    public static let company = NameTable([], fallback: { AssignedNumbers.companyName(UInt16(truncatingIfNeeded: $0)) })
}
