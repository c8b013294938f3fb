/// Field specs that recur across HCI tables (units from Core v5.4 Vol 4 Part E 7.8).
extension FieldSpec {
    /// Connection interval, ×1.25 ms.
    public static let connectionInterval = FieldSpec.scaled(2, factor: 1.25, unit: "msec")
    /// Advertising / scan interval or window on 2 bytes, ×0.625 ms.
    public static let advertisingInterval = FieldSpec.scaled(2, factor: 0.625, unit: "msec")
    /// Extended advertising interval on 3 bytes, ×0.625 ms.
    public static let advertisingInterval24 = FieldSpec.scaled(3, factor: 0.625, unit: "msec")
    /// Supervision timeout, ×10 ms.
    public static let supervisionTimeout = FieldSpec.scaled(2, factor: 10, unit: "msec")
    /// Minimum/maximum CE length, ×0.625 ms.
    public static let ceLength = FieldSpec.scaled(2, factor: 0.625, unit: "msec")
    public static let rssi = FieldSpec.signed(1, unit: "dBm")
    public static let txPower = FieldSpec.signed(1, unit: "dBm")
    /// Peripheral latency in connection events.
    public static let latency = FieldSpec.uint(2)
    public static let phy = FieldSpec.named(1, HCINames.phy)
    public static let role = FieldSpec.named(1, HCINames.role)
    public static let enable = FieldSpec.named(1, HCINames.enable)
    public static let advertisingHandle = FieldSpec.uint(1)
    public static let numPackets = FieldSpec.uint(1)
    /// 8-byte LE feature mask.
    public static let leFeatures = FieldSpec.flags(8, HCINames.leFeatures)
}

/// Name tables for HCI fields shown in output.
public enum HCINames {
    public static let phy = NameTable([(1, "LE 1M"), (2, "LE 2M"), (3, "LE Coded")])
    public static let role = NameTable([(0, "Central"), (1, "Peripheral")])
    public static let enable = NameTable([(0, "Disabled"), (1, "Enabled")])
    public static let advertisingType = NameTable([
        (0, "Connectable undirected - ADV_IND"), (1, "Connectable directed - ADV_DIRECT_IND (high duty)"),
        (2, "Scannable undirected - ADV_SCAN_IND"), (3, "Non connectable undirected - ADV_NONCONN_IND"),
        (4, "Connectable directed - ADV_DIRECT_IND (low duty)"),
    ])
    public static let advertisingReportEventType = NameTable([
        (0, "Connectable undirected - ADV_IND"), (1, "Connectable directed - ADV_DIRECT_IND"),
        (2, "Scannable undirected - ADV_SCAN_IND"), (3, "Non connectable undirected - ADV_NONCONN_IND"),
        (4, "Scan response - SCAN_RSP"),
    ])
    public static let extendedAdvertisingEventProperties = NameTable([
        (0x0001, "Connectable"), (0x0002, "Scannable"), (0x0004, "Directed"), (0x0008, "High Duty Cycle Directed"),
        (0x0010, "Use legacy advertising PDUs"), (0x0020, "Anonymous advertising"), (0x0040, "Include TxPower"),
    ])
    public static let extendedReportEventType = NameTable([
        (0x0001, "Connectable"), (0x0002, "Scannable"), (0x0004, "Directed"), (0x0008, "Scan response"),
        (0x0010, "Use legacy advertising PDUs"), (0x0020, "Data status: incomplete, more to come"),
        (0x0040, "Data status: incomplete, truncated"),
    ])
    public static let scanType = NameTable([(0, "Passive"), (1, "Active")])
    public static let filterPolicy = NameTable([
        (0, "Accept all"), (1, "Filter Accept List only"), (2, "Accept all, directed RPA"), (3, "Filter Accept List, directed RPA"),
    ])
    public static let ownAddressType = NameTable([
        (0, "Public"), (1, "Random"), (2, "Resolvable or public"), (3, "Resolvable or random"),
    ])
    public static let encryption = NameTable([(0, "Off"), (1, "On (AES-CCM for LE, E0 for BR/EDR)"), (2, "On (AES-CCM, BR/EDR)")])
    public static let clockAccuracy = NameTable([
        (0, "500 ppm"), (1, "250 ppm"), (2, "150 ppm"), (3, "100 ppm"), (4, "75 ppm"), (5, "50 ppm"), (6, "30 ppm"), (7, "20 ppm"),
    ])
    public static let linkType = NameTable([(0, "SCO"), (1, "ACL"), (2, "eSCO")])
    public static let version = NameTable([
        (0, "1.0b"), (1, "1.1"), (2, "1.2"), (3, "2.0"), (4, "2.1"), (5, "3.0"), (6, "4.0"), (7, "4.1"), (8, "4.2"),
        (9, "5.0"), (10, "5.1"), (11, "5.2"), (12, "5.3"), (13, "5.4"), (14, "6.0"),
    ])
    public static let phyMask = NameTable([(0x01, "LE 1M"), (0x02, "LE 2M"), (0x04, "LE Coded")])
    public static let leFeatures = NameTable([
        (1 << 0, "LE Encryption"), (1 << 1, "Connection Parameters Request Procedure"),
        (1 << 2, "Extended Reject Indication"), (1 << 3, "Peripheral-initiated Features Exchange"),
        (1 << 4, "LE Ping"), (1 << 5, "LE Data Packet Length Extension"), (1 << 6, "LL Privacy"),
        (1 << 7, "Extended Scanner Filter Policies"), (1 << 8, "LE 2M PHY"), (1 << 9, "Stable Modulation Index - Transmitter"),
        (1 << 10, "Stable Modulation Index - Receiver"), (1 << 11, "LE Coded PHY"), (1 << 12, "LE Extended Advertising"),
        (1 << 13, "LE Periodic Advertising"), (1 << 14, "Channel Selection Algorithm #2"), (1 << 15, "LE Power Class 1"),
        (1 << 16, "Minimum Number of Used Channels Procedure"), (1 << 17, "Connection CTE Request"),
        (1 << 18, "Connection CTE Response"), (1 << 19, "Connectionless CTE Transmitter"),
        (1 << 20, "Connectionless CTE Receiver"), (1 << 21, "Antenna Switching During CTE Transmission (AoD)"),
        (1 << 22, "Antenna Switching During CTE Reception (AoA)"), (1 << 23, "Receiving Constant Tone Extensions"),
        (1 << 24, "Periodic Advertising Sync Transfer - Sender"), (1 << 25, "Periodic Advertising Sync Transfer - Recipient"),
        (1 << 26, "Sleep Clock Accuracy Updates"), (1 << 27, "Remote Public Key Validation"),
        (1 << 28, "Connected Isochronous Stream - Central"), (1 << 29, "Connected Isochronous Stream - Peripheral"),
        (1 << 30, "Isochronous Broadcaster"), (1 << 31, "Synchronized Receiver"), (1 << 32, "Connected Isochronous Stream (Host Support)"),
        (1 << 33, "LE Power Control Request"), (1 << 34, "LE Power Control Request"), (1 << 35, "LE Path Loss Monitoring"),
        (1 << 36, "Periodic Advertising ADI support"), (1 << 37, "Connection Subrating"),
        (1 << 38, "Connection Subrating (Host Support)"), (1 << 39, "Channel Classification"),
    ])
}
