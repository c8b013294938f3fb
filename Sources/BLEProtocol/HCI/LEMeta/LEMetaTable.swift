/// LE Meta event subevents, Core v5.4 Vol 4 Part E 7.7.65. One row per subevent, in spec order.
enum LEMetaTable {
    static let connectionComplete: [Param] = [
        Param("Status", .status, key: "Status"), Param("Handle", .handle, key: HCIKey.connectionHandle), Param("Role", .role, key: "Role"),
        Param(.peerAddressType, "Peer Address Type", .addressType, key: HCIKey.peerAddressType), Param("Peer Address", .address, key: HCIKey.peerAddress),
        Param(.connectionInterval, "Connection Interval", .connectionInterval, key: "Connection_Interval"), Param("Peripheral Latency", .latency, key: "Peripheral_Latency"),
        Param("Supervision Timeout", .supervisionTimeout, key: HCIKey.supervisionTimeout), Param(.centralClockAccuracy, "Central Clock Accuracy", .named(1, HCINames.clockAccuracy), key: "Central_Clock_Accuracy"),
    ]
    static let enhancedConnectionComplete: [Param] = [
        Param("Status", .status, key: "Status"), Param("Handle", .handle, key: HCIKey.connectionHandle), Param("Role", .role, key: "Role"),
        Param(.peerAddressType, "Peer Address Type", .addressType, key: HCIKey.peerAddressType), Param("Peer Address", .address, key: HCIKey.peerAddress),
        Param(.localAddress, "Local Resolvable Private Address", .address, key: "Local_Resolvable_Private_Address"), Param(.peerResolvableAddress, "Peer Resolvable Private Address", .address, key: "Peer_Resolvable_Private_Address"),
        Param(.connectionInterval, "Connection Interval", .connectionInterval, key: "Connection_Interval"), Param("Peripheral Latency", .latency, key: "Peripheral_Latency"),
        Param("Supervision Timeout", .supervisionTimeout, key: HCIKey.supervisionTimeout), Param(.centralClockAccuracy, "Central Clock Accuracy", .named(1, HCINames.clockAccuracy), key: "Central_Clock_Accuracy"),
    ]
    /// LE Periodic Advertising Sync Established v1 (7.7.65.14); v2 appends the PAwR timing.
    static let syncEstablished: [Param] = [
        Param("Status", .status), Param("Sync Handle", .syncHandle), Param("SID", .uint(1)),
        Param("Advertiser Address Type", .addressType), Param("Advertiser Address", .address), Param("Advertiser PHY", .phy),
        Param("Periodic Advertising Interval", .interval125), Param("Advertiser Clock Accuracy", .named(1, HCINames.clockAccuracy)),
    ]
    /// LE Periodic Advertising Sync Transfer Received v1 (7.7.65.24); v2 appends the PAwR timing.
    static let syncTransferReceived: [Param] = [
        Param("Status", .status), Param("Handle", .handle), Param("Service Data", .hex(2)), Param("Sync Handle", .syncHandle),
        Param("SID", .uint(1)), Param("Advertiser Address Type", .addressType), Param("Advertiser Address", .address),
        Param("Advertiser PHY", .phy), Param("Periodic Advertising Interval", .interval125),
        Param("Advertiser Clock Accuracy", .named(1, HCINames.clockAccuracy)),
    ]
    /// Periodic Advertising with Responses timing of the v2 sync events.
    static let pawrTiming: [Param] = [
        Param("Num Subevents", .uint(1)), Param("Subevent Interval", .scaled(1, factor: 1.25, unit: "msec")),
        Param("Response Slot Delay", .scaled(1, factor: 1.25, unit: "msec")),
        Param("Response Slot Spacing", .scaled(1, factor: 0.125, unit: "msec")),
    ]
    /// IQ sample fields shared by the connectionless and connection IQ reports (7.7.65.21, 7.7.65.22).
    static let iqSamples: [Param] = [
        Param(.rssi, "RSSI", .signed(2, unit: "x 0.1 dBm")), Param("RSSI Antenna ID", .uint(1)), Param("CTE Type", .named(1, HCINames.cteType)),
        Param("Slot Durations", .uint(1)),
        Param("Packet Status", .named(1, NameTable([(0, "CRC correct"), (1, "CRC incorrect, Length and CTETime from CTEInfo"),
                                                    (2, "CRC incorrect, Length and CTETime from other means"),
                                                    (0xFF, "Insufficient resources")]))),
    ]
    static let samples = Param("Samples", .counted(countBytes: 1, [Param("I", .signed(1, unit: "")), Param("Q", .signed(1, unit: ""))]))
    static let bigParameters: [Param] = [
        Param("NSE", .uint(1)), Param("BN", .uint(1)), Param("PTO", .uint(1)), Param("IRC", .uint(1)), Param("Max PDU", .uint(2)),
        Param("ISO Interval", .interval125), Param("BIS Handles", .counted(countBytes: 1, [Param("Handle", .handle)])),
    ]

    static let rows: [MessageEntry] = [
        .init(UInt16(LESubevent.connectionComplete), "LE Connection Complete", connectionComplete),
        .init(UInt16(LESubevent.advertisingReport), "LE Advertising Report", [Param("Reports", .counted(countBytes: 1, [
            Param("Event Type", .named(1, HCINames.advertisingReportEventType), key: HCIKey.eventType), Param("Address Type", .addressType, key: HCIKey.addressType),
            Param("Address", .address, key: HCIKey.address), Param("Data", .custom(ADFieldSpec.lengthPrefixed), key: HCIKey.data), Param(.rssi, "RSSI", .rssi, key: HCIKey.rssi)]), key: HCIKey.numReports)]),
        .init(UInt16(LESubevent.connectionUpdateComplete), "LE Connection Update Complete", [
            Param("Status", .status, key: "Status"), Param("Handle", .handle, key: HCIKey.connectionHandle), Param(.connectionInterval, "Connection Interval", .connectionInterval, key: "Connection_Interval"),
            Param("Peripheral Latency", .latency, key: "Peripheral_Latency"), Param("Supervision Timeout", .supervisionTimeout, key: HCIKey.supervisionTimeout)]),
        .init(UInt16(LESubevent.readRemoteFeaturesComplete), "LE Read Remote Features Complete", [Param("Status", .status), Param("Handle", .handle), Param("Features", .leFeatures)]),
        .init(UInt16(LESubevent.longTermKeyRequest), "LE Long Term Key Request", [
            Param("Handle", .handle, key: HCIKey.connectionHandle), Param(.randomNumber, "Random Number", .hex(8), key: "Random_Number"), Param(.encryptedDiversifier, "Encrypted Diversifier", .hex(2), key: "Encrypted_Diversifier")]),
        .init(UInt16(LESubevent.remoteConnectionParameterRequest), "LE Remote Connection Parameter Request", [
            Param("Handle", .handle), Param("Min Connection Interval", .connectionInterval),
            Param("Max Connection Interval", .connectionInterval), Param("Max Latency", .latency),
            Param("Supervision Timeout", .supervisionTimeout)]),
        .init(UInt16(LESubevent.dataLengthChange), "LE Data Length Change", [
            Param("Handle", .handle, key: HCIKey.connectionHandle), Param("Max TX Octets", .uint(2), key: "Max_TX_Octets"), Param("Max TX Time", .uint(2), key: "Max_TX_Time"),
            Param("Max RX Octets", .uint(2), key: "Max_RX_Octets"), Param("Max RX Time", .uint(2), key: "Max_RX_Time")]),
        .init(UInt16(LESubevent.readLocalP256PublicKeyComplete), "LE Read Local P-256 Public Key Complete", [Param("Status", .status), Param("Public Key", .bytes(64))]),
        .init(UInt16(LESubevent.generateDHKeyComplete), "LE Generate DHKey Complete", [Param("Status", .status), Param("DHKey", .secret(32))]),
        .init(UInt16(LESubevent.enhancedConnectionComplete), "LE Enhanced Connection Complete", enhancedConnectionComplete),
        .init(UInt16(LESubevent.directedAdvertisingReport), "LE Directed Advertising Report", [Param("Reports", .counted(countBytes: 1, [
            Param("Event Type", .named(1, HCINames.advertisingReportEventType)), Param("Address Type", .addressType),
            Param("Address", .address), Param("Direct Address Type", .addressType), Param("Direct Address", .address),
            Param(.rssi, "RSSI", .rssi)]))]),
        .init(UInt16(LESubevent.phyUpdateComplete), "LE PHY Update Complete", [Param("Status", .status, key: "Status"), Param("Handle", .handle, key: HCIKey.connectionHandle), Param("TX PHY", .phy, key: "TX_PHY"), Param("RX PHY", .phy, key: "RX_PHY")]),
        .init(UInt16(LESubevent.extendedAdvertisingReport), "LE Extended Advertising Report", [Param("Reports", .counted(countBytes: 1, [
            Param("Event Type", .flags(2, HCINames.extendedReportEventType), key: HCIKey.eventType), Param("Address Type", .addressType, key: HCIKey.addressType),
            Param("Address", .address, key: HCIKey.address), Param("Primary PHY", .phy, key: HCIKey.primaryPHY), Param("Secondary PHY", .named(1, HCINames.secondaryPHY), key: HCIKey.secondaryPHY),
            Param("SID", .uint(1), key: HCIKey.advertisingSID), Param(.txPower, "TX Power", .txPower, key: HCIKey.txPower), Param(.rssi, "RSSI", .rssi, key: HCIKey.rssi),
            Param("Periodic Advertising Interval", .interval125, key: HCIKey.periodicAdvertisingInterval),
            Param("Direct Address Type", .addressType, key: HCIKey.directAddressType), Param("Direct Address", .address, key: HCIKey.directAddress),
            Param("Data", .custom(ADFieldSpec.lengthPrefixed), key: HCIKey.data)]), key: HCIKey.numReports)]),
        .init(0x0E, "LE Periodic Advertising Sync Established", syncEstablished),
        .init(0x0F, "LE Periodic Advertising Report", [
            Param("Sync Handle", .syncHandle), Param(.txPower, "TX Power", .txPower), Param(.rssi, "RSSI", .rssi),
            Param("CTE Type", .named(1, HCINames.cteType)), Param("Data Status", .named(1, HCINames.dataStatus)),
            Param("Data", .custom(ADFieldSpec.lengthPrefixed))]),
        .init(UInt16(LESubevent.periodicAdvertisingSyncLost), "LE Periodic Advertising Sync Lost", [Param("Sync Handle", .syncHandle, key: "Sync_Handle")]),
        .init(0x11, "LE Scan Timeout", []),
        .init(UInt16(LESubevent.advertisingSetTerminated), "LE Advertising Set Terminated", [
            Param("Status", .status, key: "Status"), Param("Advertising Handle", .advertisingHandle, key: HCIKey.advertisingHandle), Param("Handle", .handle, key: HCIKey.connectionHandle),
            Param("Num Completed Extended Advertising Events", .uint(1), key: "Num_Completed_Extended_Advertising_Events")]),
        .init(0x13, "LE Scan Request Received", [
            Param("Advertising Handle", .advertisingHandle), Param("Scanner Address Type", .addressType), Param("Scanner Address", .address)]),
        .init(UInt16(LESubevent.channelSelectionAlgorithm), "LE Channel Selection Algorithm", [
            Param("Handle", .handle), Param("Algorithm", .named(1, NameTable([(0, "#1"), (1, "#2")])))]),
        .init(0x15, "LE Connectionless IQ Report", [Param("Sync Handle", .syncHandle), Param("Channel Index", .uint(1))]
              + iqSamples + [Param("Periodic Event Counter", .uint(2)), samples]),
        .init(0x16, "LE Connection IQ Report", [Param("Handle", .handle), Param("RX PHY", .phy), Param("Data Channel Index", .uint(1))]
              + iqSamples + [Param("Connection Event Counter", .uint(2)), samples]),
        .init(0x17, "LE CTE Request Failed", [Param("Status", .status), Param("Handle", .handle)]),
        .init(0x18, "LE Periodic Advertising Sync Transfer Received", syncTransferReceived),
        .init(0x19, "LE CIS Established", [
            Param("Status", .status), Param("Handle", .handle), Param("CIG Sync Delay", .microseconds24),
            Param("CIS Sync Delay", .microseconds24), Param("Transport Latency C To P", .microseconds24),
            Param("Transport Latency P To C", .microseconds24), Param("PHY C To P", .phy), Param("PHY P To C", .phy),
            Param("NSE", .uint(1)), Param("BN C To P", .uint(1)), Param("BN P To C", .uint(1)), Param("FT C To P", .uint(1)),
            Param("FT P To C", .uint(1)), Param("Max PDU C To P", .uint(2)), Param("Max PDU P To C", .uint(2)),
            Param("ISO Interval", .interval125)]),
        .init(0x1A, "LE CIS Request", [
            Param("ACL Handle", .handle), Param("CIS Handle", .handle), Param("CIG ID", .uint(1)), Param("CIS ID", .uint(1))]),
        .init(0x1B, "LE Create BIG Complete", [
            Param("Status", .status), Param("BIG Handle", .uint(1)), Param("BIG Sync Delay", .microseconds24),
            Param("Transport Latency", .microseconds24), Param("PHY", .phy)] + bigParameters),
        .init(0x1C, "LE Terminate BIG Complete", [Param("BIG Handle", .uint(1)), Param(.reason, "Reason", .status)]),
        .init(0x1D, "LE BIG Sync Established", [
            Param("Status", .status), Param("BIG Handle", .uint(1)), Param("Transport Latency", .microseconds24)] + bigParameters),
        .init(0x1E, "LE BIG Sync Lost", [Param("BIG Handle", .uint(1)), Param(.reason, "Reason", .status)]),
        .init(0x1F, "LE Request Peer SCA Complete", [
            Param("Status", .status), Param("Handle", .handle), Param("Peer Clock Accuracy", .named(1, HCINames.sleepClockAccuracy))]),
        .init(0x20, "LE Path Loss Threshold", [
            Param("Handle", .handle), Param("Current Path Loss", .scaled(1, factor: 1, unit: "dB")),
            Param("Zone Entered", .named(1, HCINames.pathLossZone))]),
        .init(0x21, "LE Transmit Power Reporting", [
            Param("Status", .status), Param("Handle", .handle), Param(.reason, "Reason", .named(1, HCINames.powerReportingReason)),
            Param("PHY", .named(1, HCINames.codedPHY)), Param(.txPower, "TX Power", .txPower),
            Param(.txPower, "TX Power Level Flag", .flags(1, HCINames.powerLevelFlags)), Param("Delta", .signed(1, unit: "dB"))]),
        .init(0x22, "LE BIGInfo Advertising Report", [
            Param("Sync Handle", .syncHandle), Param("Num BIS", .uint(1)), Param("NSE", .uint(1)), Param("ISO Interval", .interval125),
            Param("BN", .uint(1)), Param("PTO", .uint(1)), Param("IRC", .uint(1)), Param("Max PDU", .uint(2)),
            Param("SDU Interval", .microseconds24), Param("Max SDU", .uint(2)), Param("PHY", .phy),
            Param("Framing", .named(1, HCINames.framing)), Param("Encryption", .named(1, HCINames.bigEncryption))]),
        .init(0x23, "LE Subrate Change", [
            Param("Status", .status), Param("Handle", .handle), Param("Subrate Factor", .uint(2)),
            Param("Peripheral Latency", .latency), Param("Continuation Number", .uint(2)),
            Param("Supervision Timeout", .supervisionTimeout)]),
        .init(0x24, "LE Periodic Advertising Sync Established v2", syncEstablished + pawrTiming),
        .init(0x25, "LE Periodic Advertising Report v2", [
            Param("Sync Handle", .syncHandle), Param(.txPower, "TX Power", .txPower), Param(.rssi, "RSSI", .rssi),
            Param("CTE Type", .named(1, HCINames.cteType)), Param("Periodic Event Counter", .uint(2)), Param(.subevent, "Subevent", .uint(1)),
            Param("Data Status", .named(1, HCINames.dataStatus)), Param("Data", .custom(ADFieldSpec.lengthPrefixed))]),
        .init(0x26, "LE Periodic Advertising Sync Transfer Received v2", syncTransferReceived + pawrTiming),
        .init(0x27, "LE Periodic Advertising Subevent Data Request", [
            Param("Advertising Handle", .advertisingHandle), Param("Subevent Start", .uint(1)), Param("Subevent Data Count", .uint(1))]),
        .init(0x28, "LE Periodic Advertising Response Report", [
            Param("Advertising Handle", .advertisingHandle), Param(.subevent, "Subevent", .uint(1)),
            Param("TX Status", .named(1, NameTable([(0, "AUX_SYNC_SUBEVENT_IND packet was transmitted"),
                                                    (1, "AUX_SYNC_SUBEVENT_IND packet was not transmitted")]))),
            Param("Responses", .counted(countBytes: 1, [
                Param(.txPower, "TX Power", .txPower), Param(.rssi, "RSSI", .rssi), Param("CTE Type", .named(1, HCINames.cteType)),
                Param("Response Slot", .uint(1)), Param("Data Status", .named(1, HCINames.dataStatus)),
                Param("Data", .custom(ADFieldSpec.lengthPrefixed))]))]),
        .init(UInt16(LESubevent.enhancedConnectionCompleteV2), "LE Enhanced Connection Complete v2", enhancedConnectionComplete + [
            Param("Advertising Handle", .advertisingHandle, key: HCIKey.advertisingHandle), Param("Sync Handle", .syncHandle, key: "Sync_Handle")]),
    ]
}
