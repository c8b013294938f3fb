import BLEBytes

/// LE Meta event subevents, Core v5.4 Vol 4 Part E 7.7.65. One row per subevent, in spec order.
enum LEMetaTable {
    static let connectionComplete: [Param] = [
        Param("Status", .status), Param("Handle", .handle), Param("Role", .role),
        Param("Peer Address Type", .addressType), Param("Peer Address", .address),
        Param("Connection Interval", .connectionInterval), Param("Peripheral Latency", .latency),
        Param("Supervision Timeout", .supervisionTimeout), Param("Central Clock Accuracy", .named(1, HCINames.clockAccuracy)),
    ]
    static let enhancedConnectionComplete: [Param] = [
        Param("Status", .status), Param("Handle", .handle), Param("Role", .role),
        Param("Peer Address Type", .addressType), Param("Peer Address", .address),
        Param("Local Resolvable Private Address", .address), Param("Peer Resolvable Private Address", .address),
        Param("Connection Interval", .connectionInterval), Param("Peripheral Latency", .latency),
        Param("Supervision Timeout", .supervisionTimeout), Param("Central Clock Accuracy", .named(1, HCINames.clockAccuracy)),
    ]

    static let rows: [MessageEntry] = [
        .init(0x01, "LE Connection Complete", connectionComplete),
        .init(0x02, "LE Advertising Report", [Param("Reports", .counted(countBytes: 1, [
            Param("Event Type", .named(1, HCINames.advertisingReportEventType)), Param("Address Type", .addressType),
            Param("Address", .address), Param("Data", .custom(ADFieldSpec.lengthPrefixed)), Param("RSSI", .rssi)]))]),
        .init(0x03, "LE Connection Update Complete", [
            Param("Status", .status), Param("Handle", .handle), Param("Connection Interval", .connectionInterval),
            Param("Peripheral Latency", .latency), Param("Supervision Timeout", .supervisionTimeout)]),
        .init(0x04, "LE Read Remote Features Complete", [Param("Status", .status), Param("Handle", .handle), Param("Features", .leFeatures)]),
        .init(0x05, "LE Long Term Key Request", [
            Param("Handle", .handle), Param("Random Number", .hex(8)), Param("Encrypted Diversifier", .hex(2))]),
        .init(0x06, "LE Remote Connection Parameter Request", [
            Param("Handle", .handle), Param("Min Connection Interval", .connectionInterval),
            Param("Max Connection Interval", .connectionInterval), Param("Max Latency", .latency),
            Param("Supervision Timeout", .supervisionTimeout)]),
        .init(0x07, "LE Data Length Change", [
            Param("Handle", .handle), Param("Max TX Octets", .uint(2)), Param("Max TX Time", .uint(2)),
            Param("Max RX Octets", .uint(2)), Param("Max RX Time", .uint(2))]),
        .init(0x08, "LE Read Local P-256 Public Key Complete", [Param("Status", .status), Param("Public Key", .secret(64))]),
        .init(0x09, "LE Generate DHKey Complete", [Param("Status", .status), Param("DHKey", .secret(32))]),
        .init(0x0A, "LE Enhanced Connection Complete", enhancedConnectionComplete),
        .init(0x0B, "LE Directed Advertising Report", [Param("Reports", .counted(countBytes: 1, [
            Param("Event Type", .uint(1)), Param("Address Type", .addressType), Param("Address", .address),
            Param("Direct Address Type", .addressType), Param("Direct Address", .address), Param("RSSI", .rssi)]))]),
        .init(0x0C, "LE PHY Update Complete", [Param("Status", .status), Param("Handle", .handle), Param("TX PHY", .phy), Param("RX PHY", .phy)]),
        .init(0x0D, "LE Extended Advertising Report", [Param("Reports", .counted(countBytes: 1, [
            Param("Event Type", .flags(2, HCINames.extendedReportEventType)), Param("Address Type", .addressType),
            Param("Address", .address), Param("Primary PHY", .phy),
            Param("Secondary PHY", .named(1, NameTable([(0, "No packets"), (1, "LE 1M"), (2, "LE 2M"), (3, "LE Coded")]))),
            Param("SID", .uint(1)), Param("TX Power", .txPower), Param("RSSI", .rssi),
            Param("Periodic Advertising Interval", .scaled(2, factor: 1.25, unit: "msec")),
            Param("Direct Address Type", .addressType), Param("Direct Address", .address),
            Param("Data", .custom(ADFieldSpec.lengthPrefixed))]))]),
        .init(0x0E, "LE Periodic Advertising Sync Established", [Param("Parameters", .rest)]),
        .init(0x0F, "LE Periodic Advertising Report", [Param("Parameters", .rest)]),
        .init(0x10, "LE Periodic Advertising Sync Lost", [Param("Sync Handle", .hex(2))]),
        .init(0x11, "LE Scan Timeout", []),
        .init(0x12, "LE Advertising Set Terminated", [
            Param("Status", .status), Param("Advertising Handle", .advertisingHandle), Param("Handle", .handle),
            Param("Num Completed Extended Advertising Events", .uint(1))]),
        .init(0x13, "LE Scan Request Received", [
            Param("Advertising Handle", .advertisingHandle), Param("Scanner Address Type", .addressType), Param("Scanner Address", .address)]),
        .init(0x14, "LE Channel Selection Algorithm", [
            Param("Handle", .handle), Param("Algorithm", .named(1, NameTable([(0, "#1"), (1, "#2")])))]),
        .init(0x29, "LE Enhanced Connection Complete v2", enhancedConnectionComplete + [
            Param("Advertising Handle", .advertisingHandle), Param("Sync Handle", .hex(2))]),
    ]
}
