/// LE Controller commands (OGF 0x08) up to OCF 0x0034, Core v5.4 Vol 4 Part E 7.8: legacy
/// advertising and scanning, connections, encryption, privacy, data length, PHY. One row per
/// command, in spec order. Parameters are what the host sends; `returns` are the Command Complete
/// return parameters (rows without them complete with Command Status).
/// Later LE commands: `LEAdvertisingCommands`, `LEIsochronousCommands`, `LEConnectionCommands`.
enum LEControllerCommands {
    static let status: [Param] = [Param("Status", .status)]
    static let statusHandle: [Param] = [Param("Status", .status), Param("Handle", .handle)]
    /// Connection parameters after the handle in LE Connection Update and the parameter request reply.
    static let connectionParameters: [Param] = [
        Param(.minConnectionInterval, "Min Connection Interval", .connectionInterval, key: HCIKey.connectionIntervalMin),
        Param(.maxConnectionInterval, "Max Connection Interval", .connectionInterval, key: HCIKey.connectionIntervalMax),
        Param("Max Latency", .latency, key: HCIKey.maxLatency), Param("Supervision Timeout", .supervisionTimeout, key: HCIKey.supervisionTimeout),
        Param("Min CE Length", .ceLength, key: HCIKey.minCELength), Param("Max CE Length", .ceLength, key: HCIKey.maxCELength)]
    static let peerIdentity: [Param] = [Param("Peer Identity Address Type", .addressType), Param("Peer Identity Address", .address)]

    static let rows: [MessageEntry] = [
        .init(0x2001, "LE Set Event Mask", [Param("Mask", .hex(8), key: HCIKey.leEventMask)], returns: status),
        .init(0x2002, "LE Read Buffer Size", [], returns: [
            Param("Status", .status), Param("Data Packet Length", .uint(2)), Param("Num Data Packets", .uint(1))]),
        .init(0x2003, "LE Read Local Supported Features", [], returns: [Param("Status", .status), Param("Features", .leFeatures)]),
        .init(0x2005, "LE Set Random Address", [Param("Address", .address, key: HCIKey.randomAddress)], returns: status),
        .init(0x2006, "LE Set Advertising Parameters", [
            Param("Min Advertising Interval", .advertisingInterval, key: HCIKey.advertisingIntervalMin),
            Param("Max Advertising Interval", .advertisingInterval, key: HCIKey.advertisingIntervalMax),
            Param("Type", .named(1, HCINames.advertisingType), key: HCIKey.advertisingType),
            Param(.ownAddressType, "Own Address Type", .ownAddressType, key: HCIKey.ownAddressType),
            Param("Direct Address Type", .addressType, key: HCIKey.peerAddressType), Param("Direct Address", .address, key: HCIKey.peerAddress),
            Param("Channel Map", .flags(1, HCINames.advertisingChannelMap), key: HCIKey.advertisingChannelMap),
            Param("Filter Policy", .named(1, HCINames.advertisingFilterPolicy), key: HCIKey.advertisingFilterPolicy)], returns: status),
        .init(0x2007, "LE Read Advertising Channel TX Power", [], returns: [Param("Status", .status), Param(.txPower, "TX Power", .txPower)]),
        .init(0x2008, "LE Set Advertising Data", [Param("Length", .uint(1), key: HCIKey.advertisingDataLength),
                                                  Param("Data", .custom(ADFieldSpec.advertisingData31), key: HCIKey.advertisingData)],
              returns: status),
        .init(0x2009, "LE Set Scan Response Data", [Param("Length", .uint(1), key: HCIKey.scanResponseDataLength),
                                                    Param("Data", .custom(ADFieldSpec.advertisingData31), key: HCIKey.scanResponseData)],
              returns: status),
        .init(0x200A, "LE Set Advertising Enable", [Param("Advertising", .enable, key: HCIKey.advertisingEnable)], returns: status),
        .init(0x200B, "LE Set Scan Parameters", [
            Param("Type", .named(1, HCINames.scanType), key: "LE_Scan_Type"), Param("Interval", .advertisingInterval, key: HCIKey.leScanInterval),
            Param("Window", .advertisingInterval, key: HCIKey.leScanWindow),
            Param(.ownAddressType, "Own Address Type", .ownAddressType, key: HCIKey.ownAddressType),
            Param("Filter Policy", .named(1, HCINames.filterPolicy), key: "Scanning_Filter_Policy")], returns: status),
        .init(0x200C, "LE Set Scan Enable", [Param("Scanning", .enable, key: "LE_Scan_Enable"), Param("Filter Duplicates", .enable, key: "Filter_Duplicates")],
              returns: status),
        .init(0x200D, "LE Create Connection", [
            Param("Scan Interval", .advertisingInterval, key: HCIKey.leScanInterval), Param("Scan Window", .advertisingInterval, key: HCIKey.leScanWindow),
            Param(.initiatorFilterPolicy, "Filter Policy", .named(1, HCINames.initiatorFilterPolicy), key: HCIKey.initiatorFilterPolicy),
            Param(.peerAddressType, "Peer Address Type", .addressType, key: HCIKey.peerAddressType), Param("Peer Address", .address, key: HCIKey.peerAddress),
            Param(.ownAddressType, "Own Address Type", .ownAddressType, key: HCIKey.ownAddressType)] + connectionParameters),
        .init(0x200E, "LE Create Connection Cancel", [], returns: status),
        .init(0x200F, "LE Read Filter Accept List Size", [], returns: [Param("Status", .status), Param("Size", .uint(1))]),
        .init(0x2010, "LE Clear Filter Accept List", [], returns: status),
        .init(0x2011, "LE Add Device To Filter Accept List", [Param("Address Type", .addressType, key: HCIKey.addressType), Param("Address", .address, key: HCIKey.address)],
              returns: status),
        .init(0x2012, "LE Remove Device From Filter Accept List", [Param("Address Type", .addressType), Param("Address", .address)],
              returns: status),
        .init(0x2013, "LE Connection Update", [Param("Handle", .handle, key: HCIKey.connectionHandle)] + connectionParameters),
        .init(0x2014, "LE Set Host Channel Classification", [Param("Channel Map", .hex(5))], returns: status),
        .init(0x2015, "LE Read Channel Map", [Param("Handle", .handle)], returns: statusHandle + [Param("Channel Map", .hex(5))]),
        .init(0x2016, "LE Read Remote Features", [Param("Handle", .handle, key: HCIKey.connectionHandle)]),
        .init(0x2017, "LE Encrypt", [Param("Key", .secret(16)), Param("Plaintext Data", .bytes(16))],
              returns: [Param("Status", .status), Param("Encrypted Data", .bytes(16))]),
        .init(0x2018, "LE Rand", [], returns: [Param("Status", .status), Param(.randomNumber, "Random Number", .hex(8))]),
        .init(0x2019, "LE Enable Encryption", [
            Param("Handle", .handle), Param(.randomNumber, "Random Number", .hex(8)), Param(.encryptedDiversifier, "Encrypted Diversifier", .hex(2)),
            Param(.longTermKey, "Long Term Key", .secret(16))]),
        .init(0x201A, "LE Long Term Key Request Reply", [Param("Handle", .handle, key: HCIKey.connectionHandle),
                                                         Param(.longTermKey, "Long Term Key", .secret(16), key: HCIKey.longTermKey)],
              returns: statusHandle),
        .init(0x201B, "LE Long Term Key Request Negative Reply", [Param("Handle", .handle, key: HCIKey.connectionHandle)], returns: statusHandle),
        .init(0x201C, "LE Read Supported States", [], returns: [Param("Status", .status), Param("States", .hex(8))]),
        .init(0x201D, "LE Receiver Test", [Param("RX Channel", .uint(1))], returns: status),
        .init(0x201E, "LE Transmitter Test", [Param("TX Channel", .uint(1)), Param("Test Data Length", .uint(1)),
                                              Param("Packet Payload", .named(1, HCINames.testPayload))], returns: status),
        .init(0x201F, "LE Test End", [], returns: [Param("Status", .status), Param("Num Packets", .uint(2))]),
        .init(0x2020, "LE Remote Connection Parameter Request Reply", [Param("Handle", .handle, key: HCIKey.connectionHandle)] + connectionParameters,
              returns: statusHandle),
        .init(0x2021, "LE Remote Connection Parameter Request Negative Reply", [Param("Handle", .handle), Param(.reason, "Reason", .status)],
              returns: statusHandle),
        .init(0x2022, "LE Set Data Length", [Param("Handle", .handle, key: HCIKey.connectionHandle), Param("TX Octets", .uint(2), key: "TX_Octets"),
                                             Param("TX Time", .uint(2), key: "TX_Time")],
              returns: statusHandle),
        .init(0x2023, "LE Read Suggested Default Data Length", [],
              returns: [Param("Status", .status), Param("TX Octets", .uint(2)), Param("TX Time", .uint(2))]),
        .init(0x2024, "LE Write Suggested Default Data Length", [Param("TX Octets", .uint(2)), Param("TX Time", .uint(2))],
              returns: status),
        .init(0x2025, "LE Read Local P-256 Public Key", []),
        .init(0x2026, "LE Generate DHKey", [Param("Remote P-256 Public Key", .bytes(64))]),
        .init(0x2027, "LE Add Device To Resolving List", peerIdentity + [Param("Peer IRK", .secret(16)), Param("Local IRK", .secret(16))],
              returns: status),
        .init(0x2028, "LE Remove Device From Resolving List", peerIdentity, returns: status),
        .init(0x2029, "LE Clear Resolving List", [], returns: status),
        .init(0x202A, "LE Read Resolving List Size", [], returns: [Param("Status", .status), Param("Size", .uint(1))]),
        .init(0x202B, "LE Read Peer Resolvable Address", peerIdentity,
              returns: [Param("Status", .status), Param(.randomAddress, "Peer Resolvable Address", .address)]),
        .init(0x202C, "LE Read Local Resolvable Address", peerIdentity,
              returns: [Param("Status", .status), Param(.localAddress, "Local Resolvable Address", .address)]),
        .init(0x202D, "LE Set Address Resolution Enable", [Param("Address Resolution", .enable)], returns: status),
        .init(0x202E, "LE Set Resolvable Private Address Timeout", [Param("Timeout", .scaled(2, factor: 1, unit: "s"))],
              returns: status),
        .init(0x202F, "LE Read Maximum Data Length", [], returns: [
            Param("Status", .status), Param("Max TX Octets", .uint(2)), Param("Max TX Time", .uint(2)),
            Param("Max RX Octets", .uint(2)), Param("Max RX Time", .uint(2))]),
        .init(0x2030, "LE Read PHY", [Param("Handle", .handle)], returns: statusHandle + [Param("TX PHY", .phy), Param("RX PHY", .phy)]),
        .init(0x2031, "LE Set Default PHY", [
            Param("All PHYs", .flags(1, allPHYs)), Param("TX PHYs", .flags(1, HCINames.phyMask)),
            Param("RX PHYs", .flags(1, HCINames.phyMask))], returns: status),
        .init(0x2032, "LE Set PHY", [
            Param("Handle", .handle), Param("All PHYs", .flags(1, allPHYs)), Param("TX PHYs", .flags(1, HCINames.phyMask)),
            Param("RX PHYs", .flags(1, HCINames.phyMask)),
            Param("PHY Options", .named(2, NameTable([(0, "No preferred coding"), (1, "S=2 coding preferred"),
                                                      (2, "S=8 coding preferred")])))]),
        .init(0x2033, "LE Receiver Test v2", [
            Param("RX Channel", .uint(1)), Param("PHY", .phy), Param("Modulation Index", .named(1, HCINames.modulationIndex))],
              returns: status),
        .init(0x2034, "LE Transmitter Test v2", [
            Param("TX Channel", .uint(1)), Param("Test Data Length", .uint(1)), Param("Packet Payload", .named(1, HCINames.testPayload)),
            Param("PHY", .named(1, HCINames.codedPHY))], returns: status),
    ]

    /// All_PHYs of LE Set (Default) PHY.
    static let allPHYs = NameTable([(0x01, "No TX PHY preference"), (0x02, "No RX PHY preference")])
}
