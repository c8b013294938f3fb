/// LE Controller commands (OGF 0x08) OCF 0x0035–0x005F, Core v5.4 Vol 4 Part E 7.8:
/// extended and periodic advertising, extended scanning and connecting, periodic sync, RF path,
/// Constant Tone Extensions, Periodic Advertising Sync Transfer. One row per command, in spec order.
enum LEAdvertisingCommands {
    static let status = LEControllerCommands.status
    static let statusHandle = LEControllerCommands.statusHandle
    static let statusSyncHandle: [Param] = [Param("Status", .status), Param("Sync Handle", .syncHandle)]

    /// LE Set Extended Advertising Parameters v1 (7.8.53); v2 appends the PHY options.
    static let extendedAdvertisingParameters: [Param] = [
        Param("Advertising Handle", .advertisingHandle, key: HCIKey.advertisingHandle),
        Param("Properties", .flags(2, HCINames.extendedAdvertisingEventProperties), key: HCIKey.advertisingEventProperties),
        Param("Min Advertising Interval", .advertisingInterval24, key: HCIKey.primaryAdvertisingIntervalMin),
        Param("Max Advertising Interval", .advertisingInterval24, key: HCIKey.primaryAdvertisingIntervalMax),
        Param("Channel Map", .flags(1, HCINames.advertisingChannelMap), key: HCIKey.primaryAdvertisingChannelMap),
        Param(.ownAddressType, "Own Address Type", .ownAddressType, key: HCIKey.ownAddressType),
        Param(.peerAddressType, "Peer Address Type", .addressType, key: HCIKey.peerAddressType), Param("Peer Address", .address, key: HCIKey.peerAddress),
        Param("Filter Policy", .named(1, HCINames.advertisingFilterPolicy), key: HCIKey.advertisingFilterPolicy),
        Param(.txPower, "TX Power", .txPower, key: HCIKey.advertisingTXPower), Param("Primary PHY", .phy, key: HCIKey.primaryAdvertisingPHY),
        Param("Secondary Max Skip", .uint(1), key: HCIKey.secondaryAdvertisingMaxSkip),
        Param("Secondary PHY", .phy, key: HCIKey.secondaryAdvertisingPHY), Param("SID", .uint(1), key: HCIKey.advertisingSID),
        Param("Scan Request Notification", .enable, key: HCIKey.scanRequestNotificationEnable)]
    /// Advertiser identity of the Periodic Advertiser List commands.
    static let periodicAdvertiser: [Param] = [
        Param("Advertiser Address Type", .addressType), Param("Advertiser Address", .address), Param("SID", .uint(1))]
    /// Sync transfer parameters (7.8.91, 7.8.92), after the connection handle.
    static let syncTransferParameters: [Param] = [
        Param("Mode", .named(1, HCINames.syncTransferMode)), Param("Skip", .uint(2)),
        Param("Sync Timeout", .supervisionTimeout), Param("CTE Type", .flags(1, HCINames.syncCTEType))]
    /// CTE_Length (×8 µs), CTE_Type and the antenna switching pattern of test and CTE commands.
    static let cte: [Param] = [
        Param("CTE Length", .scaled(1, factor: 8, unit: "usec")), Param("CTE Type", .named(1, HCINames.cteType))]
    /// Switching_Pattern_Length, then that many Antenna_IDs.
    static let antennaIDs = Param("Antenna IDs", .counted(countBytes: 1, [Param("Antenna ID", .uint(1))]))
    static let slotDurations = FieldSpec.named(1, NameTable([(1, "Switching and sampling slots are 1 usec each"),
                                                             (2, "Switching and sampling slots are 2 usec each")]))

    static let rows: [MessageEntry] = [
        .init(0x2035, "LE Set Advertising Set Random Address", [
            Param("Advertising Handle", .advertisingHandle, key: HCIKey.advertisingHandle),
            Param(.randomAddress, "Random Address", .address, key: HCIKey.randomAddress)], returns: status),
        .init(0x2036, "LE Set Extended Advertising Parameters", extendedAdvertisingParameters,
              returns: [Param("Status", .status), Param(.txPower, "Selected TX Power", .txPower)]),
        .init(0x2037, "LE Set Extended Advertising Data", [
            Param("Advertising Handle", .advertisingHandle, key: HCIKey.advertisingHandle),
            Param("Operation", .named(1, HCINames.dataOperation), key: HCIKey.operation),
            Param("Fragment Preference", .named(1, HCINames.fragmentPreference), key: HCIKey.fragmentPreference),
            Param("Length", .uint(1), key: HCIKey.advertisingDataLength),
            Param("Data", .custom(ADFieldSpec.advertisingDataRest), key: HCIKey.advertisingData)], returns: status),
        .init(0x2038, "LE Set Extended Scan Response Data", [
            Param("Advertising Handle", .advertisingHandle, key: HCIKey.advertisingHandle),
            Param("Operation", .named(1, HCINames.dataOperation), key: HCIKey.operation),
            Param("Fragment Preference", .named(1, HCINames.fragmentPreference), key: HCIKey.fragmentPreference),
            Param("Length", .uint(1), key: HCIKey.scanResponseDataLength),
            Param("Data", .custom(ADFieldSpec.advertisingDataRest), key: HCIKey.scanResponseData)], returns: status),
        .init(0x2039, "LE Set Extended Advertising Enable", [
            Param("Enable", .enable, key: HCIKey.enable),
            Param("Sets", .counted(countBytes: 1, [Param("Advertising Handle", .advertisingHandle, key: HCIKey.advertisingHandle),
                                                   Param("Duration", .scaled(2, factor: 10, unit: "msec"), key: HCIKey.duration),
                                                   Param("Max Extended Advertising Events", .uint(1), key: HCIKey.maxExtendedAdvertisingEvents)]),
                  key: HCIKey.numSets)], returns: status),
        .init(0x203A, "LE Read Maximum Advertising Data Length", [], returns: [Param("Status", .status), Param("Max Length", .uint(2))]),
        .init(0x203B, "LE Read Number of Supported Advertising Sets", [], returns: [Param("Status", .status), Param("Num Sets", .uint(1))]),
        .init(0x203C, "LE Remove Advertising Set", [Param("Advertising Handle", .advertisingHandle)], returns: status),
        .init(0x203D, "LE Clear Advertising Sets", [], returns: status),
        .init(0x203E, "LE Set Periodic Advertising Parameters", [
            Param("Advertising Handle", .advertisingHandle), Param("Min Interval", .interval125), Param("Max Interval", .interval125),
            Param("Properties", .flags(2, HCINames.periodicAdvertisingProperties))], returns: status),
        .init(0x203F, "LE Set Periodic Advertising Data", [
            Param("Advertising Handle", .advertisingHandle), Param("Operation", .named(1, HCINames.dataOperation)),
            Param("Length", .uint(1)), Param("Data", .custom(ADFieldSpec.advertisingDataRest))], returns: status),
        .init(0x2040, "LE Set Periodic Advertising Enable", [
            Param("Enable", .flags(1, NameTable([(0x01, "Enable"), (0x02, "Include ADI")]))),
            Param("Advertising Handle", .advertisingHandle)], returns: status),
        .init(0x2041, "LE Set Extended Scan Parameters", [
            Param(.ownAddressType, "Own Address Type", .ownAddressType), Param("Filter Policy", .named(1, HCINames.filterPolicy)),
            Param("PHYs", .custom(ExtendedScanSpec.phys))], returns: status),
        .init(0x2042, "LE Set Extended Scan Enable", [
            Param("Enable", .enable), Param("Filter Duplicates", .named(1, HCINames.filterDuplicates)),
            Param("Duration", .scaled(2, factor: 10, unit: "msec")), Param("Period", .scaled(2, factor: 1280, unit: "msec"))],
              returns: status),
        .init(0x2043, "LE Extended Create Connection", [
            Param(.initiatorFilterPolicy, "Filter Policy", .named(1, HCINames.initiatorFilterPolicy)), Param(.ownAddressType, "Own Address Type", .ownAddressType),
            Param(.peerAddressType, "Peer Address Type", .addressType), Param("Peer Address", .address),
            Param("PHYs", .custom(ExtendedScanSpec.connectionPHYs))]),
        .init(0x2044, "LE Periodic Advertising Create Sync", [
            Param("Options", .flags(1, HCINames.periodicSyncOptions)), Param("SID", .uint(1)),
            Param("Advertiser Address Type", .addressType), Param("Advertiser Address", .address), Param("Skip", .uint(2)),
            Param("Sync Timeout", .supervisionTimeout), Param("Sync CTE Type", .flags(1, HCINames.syncCTEType))]),
        .init(0x2045, "LE Periodic Advertising Create Sync Cancel", [], returns: status),
        .init(0x2046, "LE Periodic Advertising Terminate Sync", [Param("Sync Handle", .syncHandle)], returns: status),
        .init(0x2047, "LE Add Device To Periodic Advertiser List", periodicAdvertiser, returns: status),
        .init(0x2048, "LE Remove Device From Periodic Advertiser List", periodicAdvertiser, returns: status),
        .init(0x2049, "LE Clear Periodic Advertiser List", [], returns: status),
        .init(0x204A, "LE Read Periodic Advertiser List Size", [], returns: [Param("Status", .status), Param("Size", .uint(1))]),
        .init(0x204B, "LE Read Transmit Power", [],
              returns: [Param("Status", .status), Param(.txPower, "Min TX Power", .txPower), Param(.txPower, "Max TX Power", .txPower)]),
        .init(0x204C, "LE Read RF Path Compensation", [], returns: [
            Param("Status", .status), Param("RF TX Path Compensation", .signed(2, unit: "x 0.1 dB")),
            Param("RF RX Path Compensation", .signed(2, unit: "x 0.1 dB"))]),
        .init(0x204D, "LE Write RF Path Compensation", [
            Param("RF TX Path Compensation", .signed(2, unit: "x 0.1 dB")), Param("RF RX Path Compensation", .signed(2, unit: "x 0.1 dB"))],
              returns: status),
        .init(0x204E, "LE Set Privacy Mode", LEControllerCommands.peerIdentity + [Param("Privacy Mode", .named(1, HCINames.privacyMode))],
              returns: status),
        .init(0x204F, "LE Receiver Test v3", [
            Param("RX Channel", .uint(1)), Param("PHY", .phy), Param("Modulation Index", .named(1, HCINames.modulationIndex)),
            Param("Expected CTE Length", .scaled(1, factor: 8, unit: "usec")), Param("Expected CTE Type", .named(1, HCINames.cteType)),
            Param("Slot Durations", slotDurations), antennaIDs], returns: status),
        .init(0x2050, "LE Transmitter Test v3", [
            Param("TX Channel", .uint(1)), Param("Test Data Length", .uint(1)), Param("Packet Payload", .named(1, HCINames.testPayload)),
            Param("PHY", .named(1, HCINames.codedPHY))] + cte + [antennaIDs], returns: status),
        .init(0x2051, "LE Set Connectionless CTE Transmit Parameters", [Param("Advertising Handle", .advertisingHandle)] + cte + [
            Param("CTE Count", .uint(1)), antennaIDs], returns: status),
        .init(0x2052, "LE Set Connectionless CTE Transmit Enable", [
            Param("Advertising Handle", .advertisingHandle), Param("CTE Enable", .enable)], returns: status),
        .init(0x2053, "LE Set Connectionless IQ Sampling Enable", [
            Param("Sync Handle", .syncHandle), Param("Sampling Enable", .enable), Param("Slot Durations", slotDurations),
            Param("Max Sampled CTEs", .uint(1)), antennaIDs], returns: statusSyncHandle),
        .init(0x2054, "LE Set Connection CTE Receive Parameters", [
            Param("Handle", .handle), Param("Sampling Enable", .enable), Param("Slot Durations", slotDurations),
            antennaIDs], returns: statusHandle),
        .init(0x2055, "LE Set Connection CTE Transmit Parameters", [
            Param("Handle", .handle), Param("CTE Types", .flags(1, NameTable([(0x01, "AoA"), (0x02, "AoD 1 usec"), (0x04, "AoD 2 usec")]))),
            antennaIDs], returns: statusHandle),
        .init(0x2056, "LE Connection CTE Request Enable", [
            Param("Handle", .handle), Param("Enable", .enable), Param("CTE Request Interval", .uint(2)),
            Param("Requested CTE Length", .scaled(1, factor: 8, unit: "usec")), Param("Requested CTE Type", .named(1, HCINames.cteType))],
              returns: statusHandle),
        .init(0x2057, "LE Connection CTE Response Enable", [Param("Handle", .handle), Param("Enable", .enable)], returns: statusHandle),
        .init(0x2058, "LE Read Antenna Information", [], returns: [
            Param("Status", .status),
            Param("Switching Sampling Rates", .flags(1, NameTable([
                (0x01, "1 usec switching for AoD transmission"), (0x02, "1 usec sampling for AoD reception"),
                (0x04, "1 usec switching and sampling for AoA reception")]))),
            Param("Num Antennae", .uint(1)), Param("Max Switching Pattern Length", .uint(1)),
            Param("Max CTE Length", .scaled(1, factor: 8, unit: "usec"))]),
        .init(0x2059, "LE Set Periodic Advertising Receive Enable", [
            Param("Sync Handle", .syncHandle),
            Param("Enable", .flags(1, NameTable([(0x01, "Reporting enabled"), (0x02, "Duplicate filtering enabled")])))],
              returns: status),
        .init(0x205A, "LE Periodic Advertising Sync Transfer", [
            Param("Handle", .handle), Param("Service Data", .hex(2)), Param("Sync Handle", .syncHandle)], returns: statusHandle),
        .init(0x205B, "LE Periodic Advertising Set Info Transfer", [
            Param("Handle", .handle), Param("Service Data", .hex(2)), Param("Advertising Handle", .advertisingHandle)],
              returns: statusHandle),
        .init(0x205C, "LE Set Periodic Advertising Sync Transfer Parameters", [Param("Handle", .handle)] + syncTransferParameters,
              returns: statusHandle),
        .init(0x205D, "LE Set Default Periodic Advertising Sync Transfer Parameters", syncTransferParameters, returns: status),
        .init(0x205E, "LE Generate DHKey v2", [
            Param("Remote P-256 Public Key", .bytes(64)),
            Param("Key Type", .named(1, NameTable([(0, "Use the generated private key"), (1, "Use the debug private key")])))]),
        .init(0x205F, "LE Modify Sleep Clock Accuracy", [Param("Action", .named(1, HCINames.sleepClockAction))], returns: status),
    ]
}
