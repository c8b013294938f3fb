import BLEBytes

/// Field specs that recur across HCI tables (units from Core v5.4 Vol 4 Part E 7.1–7.8).
/// Prefer these fixed-size specs to `.custom`: the dispatcher derives each row's size rule from them.
extension FieldSpec {
    /// Connection interval, ×1.25 ms.
    public static let connectionInterval = FieldSpec.scaled(2, factor: 1.25, unit: "msec")
    /// Advertising / scan interval or window on 2 bytes, ×0.625 ms.
    public static let advertisingInterval = FieldSpec.scaled(2, factor: 0.625, unit: "msec")
    /// Extended advertising interval on 3 bytes, ×0.625 ms.
    public static let advertisingInterval24 = FieldSpec.scaled(3, factor: 0.625, unit: "msec")
    /// Supervision timeout (LE, also sync timeouts), ×10 ms.
    public static let supervisionTimeout = FieldSpec.scaled(2, factor: 10, unit: "msec")
    /// Minimum/maximum CE length, ×0.625 ms.
    public static let ceLength = FieldSpec.scaled(2, factor: 0.625, unit: "msec")
    /// BR/EDR baseband slots (page timeout, scan interval/window, sniff intervals), ×0.625 ms.
    public static let slots = FieldSpec.scaled(2, factor: 0.625, unit: "msec")
    /// Periodic advertising and ISO intervals, ×1.25 ms.
    public static let interval125 = FieldSpec.scaled(2, factor: 1.25, unit: "msec")
    /// 3-byte durations in microseconds (SDU intervals, ISO latencies and sync delays).
    public static let microseconds24 = FieldSpec.scaled(3, factor: 1, unit: "usec")
    public static let rssi = FieldSpec.signed(1, unit: "dBm")
    public static let txPower = FieldSpec.signed(1, unit: "dBm")
    /// Peripheral latency in connection events.
    public static let latency = FieldSpec.uint(2)
    public static let phy = FieldSpec.named(1, HCINames.phy)
    public static let role = FieldSpec.named(1, HCINames.role)
    public static let enable = FieldSpec.named(1, HCINames.enable)
    public static let advertisingHandle = FieldSpec.uint(1)
    /// Sync_Handle of a periodic advertising train (0x0000–0x0EFF).
    public static let syncHandle = FieldSpec.uint(2)
    public static let numPackets = FieldSpec.uint(1)
    /// 8-byte LE feature mask.
    public static let leFeatures = FieldSpec.flags(8, HCINames.leFeatures)
    /// Own_Address_Type of LE commands.
    public static let ownAddressType = FieldSpec.named(1, HCINames.ownAddressType)
    /// Class_Of_Device, 3 bytes.
    public static let classOfDevice = FieldSpec.hex(3)
    /// Clock_Offset: bits 14–0 of CLKNslave−CLK, bit 15 valid flag.
    public static let clockOffset = FieldSpec.hex(2)
    public static let pageScanRepetitionMode = FieldSpec.named(1, HCINames.pageScanRepetitionMode)
    /// A company identifier (Assigned Numbers 7.1), shown by name.
    public static let company = FieldSpec.named(2, CompanyNames.table)
    /// Codec_ID (Core v5.4 Vol 4 Part E 7.4.10, LE Setup ISO Data Path): coding format, company, vendor codec.
    public static let codecID = FieldSpec.group([
        Param("Coding Format", .named(1, HCINames.codingFormat)), Param("Company", .company),
        Param("Vendor Codec ID", .hex(2))])
    /// A one-byte length and that many raw bytes (codec configuration, antenna IDs, response data).
    public static let lengthPrefixedBytes = FieldSpec.custom(HCISpecs.lengthPrefixedBytes)
}

/// Name tables for HCI fields shown in output.
public enum HCINames {
    public static let phy = NameTable([(1, "LE 1M"), (2, "LE 2M"), (3, "LE Coded")])
    /// Secondary PHY of extended advertising reports (0: no packets on the secondary channel).
    public static let secondaryPHY = NameTable([(0, "No packets"), (1, "LE 1M"), (2, "LE 2M"), (3, "LE Coded")])
    /// PHY of power control and test commands, where Coded is split by coding.
    public static let codedPHY = NameTable([(1, "LE 1M"), (2, "LE 2M"), (3, "LE Coded S=8"), (4, "LE Coded S=2")])
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
    /// Advertising_Channel_Map bits.
    public static let advertisingChannelMap = NameTable([(0x01, "37"), (0x02, "38"), (0x04, "39")])
    public static let advertisingFilterPolicy = NameTable([
        (0, "Allow Scan Request from Any, Allow Connect Request from Any"),
        (1, "Allow Scan Request from Filter Accept List Only, Allow Connect Request from Any"),
        (2, "Allow Scan Request from Any, Allow Connect Request from Filter Accept List Only"),
        (3, "Allow Scan Request from Filter Accept List Only, Allow Connect Request from Filter Accept List Only"),
    ])
    public static let scanType = NameTable([(0, "Passive"), (1, "Active")])
    public static let filterPolicy = NameTable([
        (0, "Accept all"), (1, "Filter Accept List only"), (2, "Accept all, directed RPA"), (3, "Filter Accept List, directed RPA"),
    ])
    public static let initiatorFilterPolicy = NameTable([(0, "Peer address"), (1, "Filter Accept List")])
    public static let filterDuplicates = NameTable([(0, "Disabled"), (1, "Enabled"), (2, "Enabled, reset for each scan period")])
    public static let ownAddressType = NameTable([
        (0, "Public"), (1, "Random"), (2, "Resolvable or public"), (3, "Resolvable or random"),
    ])
    public static let privacyMode = NameTable([(0, "Network Privacy Mode"), (1, "Device Privacy Mode")])
    /// Operation of LE Set Extended Advertising / Scan Response / Periodic Advertising Data.
    public static let dataOperation = NameTable([
        (0, "Intermediate fragment"), (1, "First fragment"), (2, "Last fragment"), (3, "Complete data"), (4, "Unchanged data"),
    ])
    public static let fragmentPreference = NameTable([(0, "Fragment all"), (1, "Minimize fragmentation")])
    /// Data_Status of periodic advertising and response reports.
    public static let dataStatus = NameTable([
        (0, "Complete"), (1, "Incomplete, more data to come"), (2, "Incomplete, data truncated, no more to come"),
        (0xFF, "Failed to receive"),
    ])
    public static let cteType = NameTable([(0, "AoA"), (1, "AoD 1 usec"), (2, "AoD 2 usec"), (0xFF, "No Constant Tone Extension")])
    /// Periodic_Advertising_Properties.
    public static let periodicAdvertisingProperties = NameTable([(0x0040, "Include TxPower")])
    /// Options of LE Periodic Advertising Create Sync.
    public static let periodicSyncOptions = NameTable([
        (0x01, "Use Periodic Advertiser List"), (0x02, "Reporting initially disabled"),
        (0x04, "Duplicate filtering initially enabled"),
    ])
    /// Sync_CTE_Type: bits that exclude packets by CTE.
    public static let syncCTEType = NameTable([
        (0x01, "Do not sync to packets with an AoA CTE"), (0x02, "Do not sync to packets with an AoD CTE with 1 usec slots"),
        (0x04, "Do not sync to packets with an AoD CTE with 2 usec slots"), (0x08, "Do not sync to packets with a type 3 CTE"),
        (0x10, "Do not sync to packets without a CTE"),
    ])
    /// Mode of LE Set (Default) Periodic Advertising Sync Transfer Parameters.
    public static let syncTransferMode = NameTable([
        (0, "No attempt to synchronize"), (1, "Reports disabled"), (2, "Reports enabled"),
        (3, "Reports enabled with duplicate filtering"),
    ])
    public static let encryption = NameTable([(0, "Off"), (1, "On (AES-CCM for LE, E0 for BR/EDR)"), (2, "On (AES-CCM, BR/EDR)")])
    public static let clockAccuracy = NameTable([
        (0, "500 ppm"), (1, "250 ppm"), (2, "150 ppm"), (3, "100 ppm"), (4, "75 ppm"), (5, "50 ppm"), (6, "30 ppm"), (7, "20 ppm"),
    ])
    /// Sleep clock accuracy ranges (CIG parameters, peer SCA).
    public static let sleepClockAccuracy = NameTable([
        (0, "251-500 ppm"), (1, "151-250 ppm"), (2, "101-150 ppm"), (3, "76-100 ppm"), (4, "51-75 ppm"), (5, "31-50 ppm"),
        (6, "21-30 ppm"), (7, "0-20 ppm"),
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
        (1 << 30, "Isochronous Broadcaster"), (1 << 31, "Synchronized Receiver"), (1 << 32, "Isochronous Channels (Host Support)"),
        (1 << 33, "LE Power Control Request"), (1 << 34, "LE Power Control Request"), (1 << 35, "LE Path Loss Monitoring"),
        (1 << 36, "Periodic Advertising ADI support"), (1 << 37, "Connection Subrating"),
        (1 << 38, "Connection Subrating (Host Support)"), (1 << 39, "Channel Classification"),
        (1 << 40, "Advertising Coding Selection"), (1 << 41, "Advertising Coding Selection (Host Support)"),
        (1 << 43, "Periodic Advertising with Responses - Advertiser"),
        (1 << 44, "Periodic Advertising with Responses - Scanner"),
    ])
    /// An LE feature named by its bit number (LE Set Host Feature).
    public static let leFeatureBit = NameTable([], fallback: { bit in bit < 64 ? HCINames.leFeatures.name(1 << bit) : nil })

    // MARK: Isochronous channels (Core v5.4 Vol 4 Part E 7.8.97–7.8.118)

    public static let packing = NameTable([(0, "Sequential"), (1, "Interleaved")])
    public static let framing = NameTable([(0, "Unframed"), (1, "Framed")])
    public static let bigEncryption = NameTable([(0, "Unencrypted"), (1, "Encrypted")])
    /// Data_Path_Direction of LE Setup ISO Data Path.
    public static let dataPathDirection = NameTable([(0, "Input (Host to Controller)"), (1, "Output (Controller to Host)")])
    /// Data_Path_Direction bits of LE Remove ISO Data Path.
    public static let dataPathDirectionMask = NameTable([(0x01, "Input (Host to Controller)"), (0x02, "Output (Controller to Host)")])
    public static let dataPathID = NameTable([(0, "HCI"), (0xFF, "Disabled")])
    public static let isoTestPayload = NameTable([(0, "Zero length"), (1, "Variable length"), (2, "Maximum length")])
    /// Coding_Format of a Codec_ID, Assigned Numbers 2.11.
    public static let codingFormat = NameTable([
        (0x00, "u-law log"), (0x01, "A-law log"), (0x02, "CVSD"), (0x03, "Transparent"), (0x04, "Linear PCM"),
        (0x05, "mSBC"), (0x06, "LC3"), (0x07, "G.729A"), (0xFF, "Vendor Specific"),
    ])
    /// Logical_Transport_Type of codec capability and delay queries.
    public static let logicalTransport = NameTable([(0, "BR/EDR ACL"), (1, "BR/EDR SCO or eSCO"), (2, "LE CIS"), (3, "LE BIS")])
    /// Codec transport bits of Read Local Supported Codecs v2.
    public static let codecTransport = NameTable([(0x01, "BR/EDR ACL"), (0x02, "BR/EDR SCO and eSCO"), (0x04, "LE CIS"), (0x08, "LE BIS")])

    // MARK: Power control, path loss, test modes (Core v5.4 Vol 4 Part E 7.8.28–7.8.120)

    public static let pathLossZone = NameTable([(0, "Low"), (1, "Middle"), (2, "High")])
    public static let powerReportingReason = NameTable([
        (0, "Local transmit power changed"), (1, "Remote transmit power changed"),
        (2, "HCI_LE_Read_Remote_Transmit_Power_Level command completed"),
    ])
    public static let powerLevelFlags = NameTable([(0x01, "At minimum level"), (0x02, "At maximum level")])
    public static let addressChangeReasons = NameTable([
        (0x01, "Change on advertising data change"), (0x02, "Change on scan response data change"),
    ])
    public static let modulationIndex = NameTable([(0, "Standard"), (1, "Stable")])
    public static let testPayload = NameTable([
        (0, "PRBS9"), (1, "11110000"), (2, "10101010"), (3, "PRBS15"), (4, "11111111"), (5, "00000000"),
        (6, "00001111"), (7, "01010101"),
    ])
    public static let sleepClockAction = NameTable([(0, "Switch to more accurate clock"), (1, "Switch to less accurate clock")])

    // MARK: BR/EDR (Core v5.4 Vol 4 Part E 7.1–7.7)

    public static let pageScanRepetitionMode = NameTable([(0, "R0"), (1, "R1"), (2, "R2")])
    /// ACL Packet_Type bits, as btmon names them.
    public static let aclPacketType = NameTable([
        (0x0002, "2-DH1 may not be used"), (0x0004, "3-DH1 may not be used"), (0x0008, "DM1 may be used"),
        (0x0010, "DH1 may be used"), (0x0100, "2-DH3 may not be used"), (0x0200, "3-DH3 may not be used"),
        (0x0400, "DM3 may be used"), (0x0800, "DH3 may be used"), (0x1000, "2-DH5 may not be used"),
        (0x2000, "3-DH5 may not be used"), (0x4000, "DM5 may be used"), (0x8000, "DH5 may be used"),
    ])
    /// Synchronous Packet_Type bits.
    public static let syncPacketType = NameTable([
        (0x0001, "HV1 may be used"), (0x0002, "HV2 may be used"), (0x0004, "HV3 may be used"), (0x0008, "EV3 may be used"),
        (0x0010, "EV4 may be used"), (0x0020, "EV5 may be used"), (0x0040, "2-EV3 may not be used"),
        (0x0080, "3-EV3 may not be used"), (0x0100, "2-EV5 may not be used"), (0x0200, "3-EV5 may not be used"),
    ])
    public static let allowRoleSwitch = NameTable([(0, "Not allowed"), (1, "Allowed")])
    /// Role of Accept Connection Request.
    public static let acceptRole = NameTable([(0, "Become Central"), (1, "Remain Peripheral")])
    public static let retransmissionEffort = NameTable([
        (0, "No retransmissions"), (1, "At least one, optimize for power consumption"),
        (2, "At least one, optimize for link quality"), (0xFF, "Don't care"),
    ])
    public static let airMode = NameTable([(0, "u-law log"), (1, "A-law log"), (2, "CVSD"), (3, "Transparent Data")])
    public static let ioCapability = NameTable([(0, "DisplayOnly"), (1, "DisplayYesNo"), (2, "KeyboardOnly"), (3, "NoInputNoOutput")])
    public static let oobDataPresent = NameTable([
        (0, "OOB authentication data not present"), (1, "P-192 OOB authentication data present"),
        (2, "P-256 OOB authentication data present"), (3, "P-192 and P-256 OOB authentication data present"),
    ])
    public static let authenticationRequirements = NameTable([
        (0, "MITM Protection Not Required - No Bonding"), (1, "MITM Protection Required - No Bonding"),
        (2, "MITM Protection Not Required - Dedicated Bonding"), (3, "MITM Protection Required - Dedicated Bonding"),
        (4, "MITM Protection Not Required - General Bonding"), (5, "MITM Protection Required - General Bonding"),
    ])
    public static let keyType = NameTable([
        (0, "Combination Key"), (1, "Local Unit Key"), (2, "Remote Unit Key"), (3, "Debug Combination Key"),
        (4, "Unauthenticated Combination Key from P-192"), (5, "Authenticated Combination Key from P-192"),
        (6, "Changed Combination Key"), (7, "Unauthenticated Combination Key from P-256"),
        (8, "Authenticated Combination Key from P-256"),
    ])
    public static let keyFlag = NameTable([(0, "Semi-permanent Link Key"), (1, "Temporary Link Key")])
    public static let keypressNotification = NameTable([
        (0, "Passkey entry started"), (1, "Passkey digit entered"), (2, "Passkey digit erased"), (3, "Passkey cleared"),
        (4, "Passkey entry completed"),
    ])
    public static let currentMode = NameTable([(0, "Active"), (1, "Hold"), (2, "Sniff")])
    public static let linkPolicy = NameTable([
        (0x0001, "Enable Role Switch"), (0x0002, "Enable Hold Mode"), (0x0004, "Enable Sniff Mode"),
    ])
    public static let serviceType = NameTable([(0, "No Traffic"), (1, "Best Effort"), (2, "Guaranteed")])
    public static let flowDirection = NameTable([(0, "Outgoing"), (1, "Incoming")])
    public static let eventFilterType = NameTable([(0, "Clear All Filters"), (1, "Inquiry Result"), (2, "Connection Setup")])
    public static let pinType = NameTable([(0, "Variable"), (1, "Fixed")])
    public static let scanEnable = NameTable([(0, "No Scans"), (1, "Inquiry Scan"), (2, "Page Scan"), (3, "Inquiry Scan + Page Scan")])
    public static let authenticationEnable = NameTable([
        (0, "Authentication not required"), (1, "Authentication required for all connections"),
    ])
    public static let holdModeActivity = NameTable([
        (0x01, "Suspend Page Scan"), (0x02, "Suspend Inquiry Scan"), (0x04, "Suspend Periodic Inquiries"),
    ])
    public static let powerLevelType = NameTable([(0, "Current"), (1, "Maximum")])
    /// Inquiry Scan_Type and Page_Scan_Type.
    public static let scanType2 = NameTable([(0, "Standard Scan"), (1, "Interlaced Scan")])
    public static let inquiryMode = NameTable([
        (0, "Standard Inquiry Result"), (1, "Inquiry Result with RSSI"),
        (2, "Inquiry Result with RSSI or Extended Inquiry Result"),
    ])
    public static let whichClock = NameTable([(0, "Local Clock"), (1, "Piconet Clock")])
    public static let loopbackMode = NameTable([(0, "No Loopback"), (1, "Local Loopback"), (2, "Remote Loopback")])
    public static let leHostSupported = NameTable([(0, "Disabled"), (1, "Enabled")])
}

/// Hand-written readers for what the field specs cannot express.
enum HCISpecs {
    /// A one-byte length, then that many raw bytes.
    @Sendable static func lengthPrefixedBytes(_ r: inout ByteReader) throws(DecodeError) -> FieldValue {
        let length = try r.u8("Length")
        return .bytes(try r.copy(Int(length), "Data"))
    }
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
                Param(.minConnectionInterval, "Min Connection Interval", .connectionInterval),
                Param(.maxConnectionInterval, "Max Connection Interval", .connectionInterval),
                Param("Max Latency", .latency), Param("Supervision Timeout", .supervisionTimeout),
                Param("Min CE Length", .ceLength), Param("Max CE Length", .ceLength)], &r, into: &fields)
            items.append(fields)
        }
        return .list(items)
    }
}

/// A company identifier shown by name (Assigned Numbers 7.1), for rows outside the HCI tables
/// that use `.custom`; HCI rows use the fixed-size `FieldSpec.company`.
enum CompanySpec {
    @Sendable static func company(_ r: inout ByteReader) throws(DecodeError) -> FieldValue {
        let id = try r.u16le("Company")
        return .integer(UInt64(id), .named(bytes: 2, CompanyNames.table))
    }
}

/// Company names through the generated assigned-numbers table.
public enum CompanyNames {
    public static let table = NameTable([], fallback: { AssignedNumbers.companyName(UInt16(truncatingIfNeeded: $0)) })
}
