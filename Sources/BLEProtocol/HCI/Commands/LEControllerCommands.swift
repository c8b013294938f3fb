import BLEBytes

/// LE Controller commands (OGF 0x08), Core v5.4 Vol 4 Part E 7.8. One row per command, in spec order.
/// Parameters are what the host sends; `returns` are the Command Complete return parameters.
enum LEControllerCommands {
    static let rows: [MessageEntry] = [
        .init(0x2001, "LE Set Event Mask", [Param("Mask", .hex(8))], returns: [Param("Status", .status)]),
        .init(0x2002, "LE Read Buffer Size", [], returns: [
            Param("Status", .status), Param("Data Packet Length", .uint(2)), Param("Num Data Packets", .uint(1))]),
        .init(0x2003, "LE Read Local Supported Features", [], returns: [Param("Status", .status), Param("Features", .leFeatures)]),
        .init(0x2005, "LE Set Random Address", [Param("Address", .address)], returns: [Param("Status", .status)]),
        .init(0x2006, "LE Set Advertising Parameters", [
            Param("Min Advertising Interval", .advertisingInterval), Param("Max Advertising Interval", .advertisingInterval),
            Param("Type", .named(1, HCINames.advertisingType)), Param("Own Address Type", .named(1, HCINames.ownAddressType)),
            Param("Direct Address Type", .addressType), Param("Direct Address", .address),
            Param("Channel Map", .hex(1)), Param("Filter Policy", .uint(1))], returns: [Param("Status", .status)]),
        .init(0x2007, "LE Read Advertising Channel TX Power", [], returns: [Param("Status", .status), Param("TX Power", .txPower)]),
        .init(0x2008, "LE Set Advertising Data", [Param("Length", .uint(1)), Param("Data", .custom(ADFieldSpec.advertisingData31))],
              returns: [Param("Status", .status)]),
        .init(0x2009, "LE Set Scan Response Data", [Param("Length", .uint(1)), Param("Data", .custom(ADFieldSpec.advertisingData31))],
              returns: [Param("Status", .status)]),
        .init(0x200A, "LE Set Advertising Enable", [Param("Advertising", .enable)], returns: [Param("Status", .status)]),
        .init(0x200B, "LE Set Scan Parameters", [
            Param("Type", .named(1, HCINames.scanType)), Param("Interval", .advertisingInterval), Param("Window", .advertisingInterval),
            Param("Own Address Type", .named(1, HCINames.ownAddressType)), Param("Filter Policy", .named(1, HCINames.filterPolicy))],
              returns: [Param("Status", .status)]),
        .init(0x200C, "LE Set Scan Enable", [Param("Scanning", .enable), Param("Filter Duplicates", .enable)],
              returns: [Param("Status", .status)]),
        .init(0x200D, "LE Create Connection", [
            Param("Scan Interval", .advertisingInterval), Param("Scan Window", .advertisingInterval),
            Param("Filter Policy", .named(1, NameTable([(0, "Peer address"), (1, "Filter Accept List")]))),
            Param("Peer Address Type", .addressType), Param("Peer Address", .address),
            Param("Own Address Type", .named(1, HCINames.ownAddressType)),
            Param("Min Connection Interval", .connectionInterval), Param("Max Connection Interval", .connectionInterval),
            Param("Max Latency", .latency), Param("Supervision Timeout", .supervisionTimeout),
            Param("Min CE Length", .ceLength), Param("Max CE Length", .ceLength)]),
        .init(0x200E, "LE Create Connection Cancel", [], returns: [Param("Status", .status)]),
        .init(0x200F, "LE Read Filter Accept List Size", [], returns: [Param("Status", .status), Param("Size", .uint(1))]),
        .init(0x2010, "LE Clear Filter Accept List", [], returns: [Param("Status", .status)]),
        .init(0x2011, "LE Add Device To Filter Accept List", [Param("Address Type", .addressType), Param("Address", .address)],
              returns: [Param("Status", .status)]),
        .init(0x2012, "LE Remove Device From Filter Accept List", [Param("Address Type", .addressType), Param("Address", .address)],
              returns: [Param("Status", .status)]),
        .init(0x2013, "LE Connection Update", [
            Param("Handle", .handle), Param("Min Connection Interval", .connectionInterval),
            Param("Max Connection Interval", .connectionInterval), Param("Max Latency", .latency),
            Param("Supervision Timeout", .supervisionTimeout), Param("Min CE Length", .ceLength), Param("Max CE Length", .ceLength)]),
        .init(0x2014, "LE Set Host Channel Classification", [Param("Channel Map", .hex(5))], returns: [Param("Status", .status)]),
        .init(0x2015, "LE Read Channel Map", [Param("Handle", .handle)],
              returns: [Param("Status", .status), Param("Handle", .handle), Param("Channel Map", .hex(5))]),
        .init(0x2016, "LE Read Remote Features", [Param("Handle", .handle)]),
        .init(0x2017, "LE Encrypt", [Param("Key", .secret(16)), Param("Plaintext Data", .bytes(16))],
              returns: [Param("Status", .status), Param("Encrypted Data", .bytes(16))]),
        .init(0x2018, "LE Rand", [], returns: [Param("Status", .status), Param("Random Number", .hex(8))]),
        .init(0x2019, "LE Enable Encryption", [
            Param("Handle", .handle), Param("Random Number", .hex(8)), Param("Encrypted Diversifier", .hex(2)),
            Param("Long Term Key", .secret(16))]),
        .init(0x201A, "LE Long Term Key Request Reply", [Param("Handle", .handle), Param("Long Term Key", .secret(16))],
              returns: [Param("Status", .status), Param("Handle", .handle)]),
        .init(0x201B, "LE Long Term Key Request Negative Reply", [Param("Handle", .handle)],
              returns: [Param("Status", .status), Param("Handle", .handle)]),
        .init(0x201C, "LE Read Supported States", [], returns: [Param("Status", .status), Param("States", .hex(8))]),
        .init(0x201D, "LE Receiver Test", [Param("RX Channel", .uint(1))], returns: [Param("Status", .status)]),
        .init(0x201E, "LE Transmitter Test", [Param("TX Channel", .uint(1)), Param("Test Data Length", .uint(1)),
                                              Param("Packet Payload", .uint(1))], returns: [Param("Status", .status)]),
        .init(0x201F, "LE Test End", [], returns: [Param("Status", .status), Param("Num Packets", .uint(2))]),
        .init(0x2020, "LE Remote Connection Parameter Request Reply", [
            Param("Handle", .handle), Param("Min Connection Interval", .connectionInterval),
            Param("Max Connection Interval", .connectionInterval), Param("Max Latency", .latency),
            Param("Supervision Timeout", .supervisionTimeout), Param("Min CE Length", .ceLength), Param("Max CE Length", .ceLength)],
              returns: [Param("Status", .status), Param("Handle", .handle)]),
        .init(0x2021, "LE Remote Connection Parameter Request Negative Reply", [Param("Handle", .handle), Param("Reason", .status)],
              returns: [Param("Status", .status), Param("Handle", .handle)]),
        .init(0x2022, "LE Set Data Length", [Param("Handle", .handle), Param("TX Octets", .uint(2)), Param("TX Time", .uint(2))],
              returns: [Param("Status", .status), Param("Handle", .handle)]),
        .init(0x2023, "LE Read Suggested Default Data Length", [],
              returns: [Param("Status", .status), Param("TX Octets", .uint(2)), Param("TX Time", .uint(2))]),
        .init(0x2024, "LE Write Suggested Default Data Length", [Param("TX Octets", .uint(2)), Param("TX Time", .uint(2))],
              returns: [Param("Status", .status)]),
        .init(0x2025, "LE Read Local P-256 Public Key", []),
        .init(0x2026, "LE Generate DHKey", [Param("Remote P-256 Public Key", .secret(64))]),
        .init(0x2027, "LE Add Device To Resolving List", [
            Param("Peer Identity Address Type", .addressType), Param("Peer Identity Address", .address),
            Param("Peer IRK", .secret(16)), Param("Local IRK", .secret(16))], returns: [Param("Status", .status)]),
        .init(0x2028, "LE Remove Device From Resolving List", [
            Param("Peer Identity Address Type", .addressType), Param("Peer Identity Address", .address)],
              returns: [Param("Status", .status)]),
        .init(0x2029, "LE Clear Resolving List", [], returns: [Param("Status", .status)]),
        .init(0x202A, "LE Read Resolving List Size", [], returns: [Param("Status", .status), Param("Size", .uint(1))]),
        .init(0x202D, "LE Set Address Resolution Enable", [Param("Address Resolution", .enable)], returns: [Param("Status", .status)]),
        .init(0x202E, "LE Set Resolvable Private Address Timeout", [Param("Timeout", .scaled(2, factor: 1, unit: "s"))],
              returns: [Param("Status", .status)]),
        .init(0x202F, "LE Read Maximum Data Length", [], returns: [
            Param("Status", .status), Param("Max TX Octets", .uint(2)), Param("Max TX Time", .uint(2)),
            Param("Max RX Octets", .uint(2)), Param("Max RX Time", .uint(2))]),
        .init(0x2030, "LE Read PHY", [Param("Handle", .handle)],
              returns: [Param("Status", .status), Param("Handle", .handle), Param("TX PHY", .phy), Param("RX PHY", .phy)]),
        .init(0x2031, "LE Set Default PHY", [Param("All PHYs", .hex(1)), Param("TX PHYs", .flags(1, HCINames.phyMask)),
                                             Param("RX PHYs", .flags(1, HCINames.phyMask))], returns: [Param("Status", .status)]),
        .init(0x2032, "LE Set PHY", [Param("Handle", .handle), Param("All PHYs", .hex(1)), Param("TX PHYs", .flags(1, HCINames.phyMask)),
                                     Param("RX PHYs", .flags(1, HCINames.phyMask)), Param("PHY Options", .hex(2))]),
        .init(0x2035, "LE Set Advertising Set Random Address", [Param("Advertising Handle", .advertisingHandle),
                                                                Param("Random Address", .address)], returns: [Param("Status", .status)]),
        .init(0x2036, "LE Set Extended Advertising Parameters", [
            Param("Advertising Handle", .advertisingHandle),
            Param("Properties", .flags(2, HCINames.extendedAdvertisingEventProperties)),
            Param("Min Advertising Interval", .advertisingInterval24), Param("Max Advertising Interval", .advertisingInterval24),
            Param("Channel Map", .hex(1)), Param("Own Address Type", .named(1, HCINames.ownAddressType)),
            Param("Peer Address Type", .addressType), Param("Peer Address", .address), Param("Filter Policy", .uint(1)),
            Param("TX Power", .txPower), Param("Primary PHY", .phy), Param("Secondary Max Skip", .uint(1)),
            Param("Secondary PHY", .phy), Param("SID", .uint(1)), Param("Scan Request Notification", .enable)],
              returns: [Param("Status", .status), Param("Selected TX Power", .txPower)]),
        .init(0x2037, "LE Set Extended Advertising Data", [
            Param("Advertising Handle", .advertisingHandle),
            Param("Operation", .named(1, NameTable([(0, "Intermediate fragment"), (1, "First fragment"), (2, "Last fragment"),
                                                     (3, "Complete data"), (4, "Unchanged data")]))),
            Param("Fragment Preference", .uint(1)), Param("Length", .uint(1)), Param("Data", .custom(ADFieldSpec.advertisingDataRest))],
              returns: [Param("Status", .status)]),
        .init(0x2038, "LE Set Extended Scan Response Data", [
            Param("Advertising Handle", .advertisingHandle), Param("Operation", .uint(1)),
            Param("Fragment Preference", .uint(1)), Param("Length", .uint(1)), Param("Data", .custom(ADFieldSpec.advertisingDataRest))],
              returns: [Param("Status", .status)]),
        .init(0x2039, "LE Set Extended Advertising Enable", [
            Param("Enable", .enable),
            Param("Sets", .counted(countBytes: 1, [Param("Advertising Handle", .advertisingHandle),
                                                   Param("Duration", .scaled(2, factor: 10, unit: "msec")),
                                                   Param("Max Extended Advertising Events", .uint(1))]))],
              returns: [Param("Status", .status)]),
        .init(0x203A, "LE Read Maximum Advertising Data Length", [], returns: [Param("Status", .status), Param("Max Length", .uint(2))]),
        .init(0x203B, "LE Read Number of Supported Advertising Sets", [], returns: [Param("Status", .status), Param("Num Sets", .uint(1))]),
        .init(0x203C, "LE Remove Advertising Set", [Param("Advertising Handle", .advertisingHandle)], returns: [Param("Status", .status)]),
        .init(0x203D, "LE Clear Advertising Sets", [], returns: [Param("Status", .status)]),
        .init(0x2041, "LE Set Extended Scan Parameters", [
            Param("Own Address Type", .named(1, HCINames.ownAddressType)), Param("Filter Policy", .named(1, HCINames.filterPolicy)),
            Param("PHYs", .custom(ExtendedScanSpec.phys))], returns: [Param("Status", .status)]),
        .init(0x2042, "LE Set Extended Scan Enable", [
            Param("Enable", .enable), Param("Filter Duplicates", .uint(1)),
            Param("Duration", .scaled(2, factor: 10, unit: "msec")), Param("Period", .scaled(2, factor: 1280, unit: "msec"))],
              returns: [Param("Status", .status)]),
        .init(0x2043, "LE Extended Create Connection", [
            Param("Filter Policy", .uint(1)), Param("Own Address Type", .named(1, HCINames.ownAddressType)),
            Param("Peer Address Type", .addressType), Param("Peer Address", .address),
            Param("PHYs", .custom(ExtendedScanSpec.connectionPHYs))]),
        .init(0x204B, "LE Read Transmit Power", [],
              returns: [Param("Status", .status), Param("Min TX Power", .txPower), Param("Max TX Power", .txPower)]),
        .init(0x204E, "LE Set Privacy Mode", [Param("Peer Identity Address Type", .addressType), Param("Peer Identity Address", .address),
                                              Param("Privacy Mode", .named(1, NameTable([(0, "Network"), (1, "Device")])))],
              returns: [Param("Status", .status)]),
        .init(0x2060, "LE Read Buffer Size v2", [], returns: [
            Param("Status", .status), Param("ACL Data Packet Length", .uint(2)), Param("Total Num ACL Data Packets", .uint(1)),
            Param("ISO Data Packet Length", .uint(2)), Param("Total Num ISO Data Packets", .uint(1))]),
    ]
}

/// Extended scanning / connecting carry one parameter block per PHY bit set (Core v5.4 Vol 4 Part E 7.8.64, 7.8.66).
enum ExtendedScanSpec {
    @Sendable static func phys(_ r: inout ByteReader) throws(DecodeError) -> FieldValue {
        let mask = try r.u8("Scanning PHYs")
        var items: [[Field]] = [[Field("Scanning PHYs", .integer(UInt64(mask), .flags(bytes: 1, HCINames.phyMask)))]]
        for bit in [UInt8(0x01), 0x04] where mask & bit != 0 {
            var fields: [Field] = [Field("PHY", .integer(UInt64(bit), .flags(bytes: 1, HCINames.phyMask)))]
            try FieldDecoder.decode([Param("Type", .named(1, HCINames.scanType)), Param("Interval", .advertisingInterval),
                                     Param("Window", .advertisingInterval)], &r, into: &fields)
            items.append(fields)
        }
        return .list(items)
    }

    @Sendable static func connectionPHYs(_ r: inout ByteReader) throws(DecodeError) -> FieldValue {
        let mask = try r.u8("Initiating PHYs")
        var items: [[Field]] = [[Field("Initiating PHYs", .integer(UInt64(mask), .flags(bytes: 1, HCINames.phyMask)))]]
        for bit in [UInt8(0x01), 0x02, 0x04] where mask & bit != 0 {
            var fields: [Field] = [Field("PHY", .integer(UInt64(bit), .flags(bytes: 1, HCINames.phyMask)))]
            try FieldDecoder.decode([
                Param("Scan Interval", .advertisingInterval), Param("Scan Window", .advertisingInterval),
                Param("Min Connection Interval", .connectionInterval), Param("Max Connection Interval", .connectionInterval),
                Param("Max Latency", .latency), Param("Supervision Timeout", .supervisionTimeout),
                Param("Min CE Length", .ceLength), Param("Max CE Length", .ceLength)], &r, into: &fields)
            items.append(fields)
        }
        return .list(items)
    }
}
