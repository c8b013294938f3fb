/// LE Controller commands (OGF 0x08) OCF 0x0076–0x0086, Core v5.4 Vol 4 Part E 7.8:
/// LE power control and path loss monitoring, transmitter test v4, data related address changes,
/// connection subrating, extended advertising parameters v2, Periodic Advertising with Responses
/// and LE Extended Create Connection v2. One row per command, in spec order.
enum LEConnectionCommands {
    static let status = LEControllerCommands.status
    static let statusHandle = LEControllerCommands.statusHandle
    /// Subrate parameters of LE Set Default Subrate and LE Subrate Request (7.8.123, 7.8.124).
    static let subrateParameters: [Param] = [
        Param("Subrate Min", .uint(2)), Param("Subrate Max", .uint(2)), Param("Max Latency", .latency),
        Param("Continuation Number", .uint(2)), Param("Supervision Timeout", .supervisionTimeout)]
    static let phyOptions = FieldSpec.named(1, NameTable([
        (0, "No preference"), (1, "S=2 coding preferred"), (2, "S=8 coding preferred"), (3, "S=2 coding required"),
        (4, "S=8 coding required")]))

    static let rows: [MessageEntry] = [
        .init(0x2076, "LE Enhanced Read Transmit Power Level", [Param("Handle", .handle), Param("PHY", .named(1, HCINames.codedPHY))],
              returns: statusHandle + [Param("PHY", .named(1, HCINames.codedPHY)), Param(.txPower, "Current TX Power", .txPower),
                                       Param(.txPower, "Max TX Power", .txPower)]),
        .init(0x2077, "LE Read Remote Transmit Power Level", [Param("Handle", .handle), Param("PHY", .named(1, HCINames.codedPHY))]),
        .init(0x2078, "LE Set Path Loss Reporting Parameters", [
            Param("Handle", .handle), Param("High Threshold", .scaled(1, factor: 1, unit: "dB")),
            Param("High Hysteresis", .scaled(1, factor: 1, unit: "dB")), Param("Low Threshold", .scaled(1, factor: 1, unit: "dB")),
            Param("Low Hysteresis", .scaled(1, factor: 1, unit: "dB")), Param("Min Time Spent", .uint(2))], returns: statusHandle),
        .init(0x2079, "LE Set Path Loss Reporting Enable", [Param("Handle", .handle), Param("Enable", .enable)], returns: statusHandle),
        .init(0x207A, "LE Set Transmit Power Reporting Enable", [
            Param("Handle", .handle), Param("Local Enable", .enable), Param("Remote Enable", .enable)], returns: statusHandle),
        .init(0x207B, "LE Transmitter Test v4", [
            Param("TX Channel", .uint(1)), Param("Test Data Length", .uint(1)), Param("Packet Payload", .named(1, HCINames.testPayload)),
            Param("PHY", .named(1, HCINames.codedPHY))] + LEAdvertisingCommands.cte + [
            LEAdvertisingCommands.antennaIDs, Param(.txPower, "TX Power", .txPower)], returns: status),
        .init(0x207C, "LE Set Data Related Address Changes", [
            Param("Advertising Handle", .advertisingHandle), Param("Change Reasons", .flags(1, HCINames.addressChangeReasons))],
              returns: status),
        .init(0x207D, "LE Set Default Subrate", subrateParameters, returns: status),
        .init(0x207E, "LE Subrate Request", [Param("Handle", .handle)] + subrateParameters),
        .init(0x207F, "LE Set Extended Advertising Parameters v2", LEAdvertisingCommands.extendedAdvertisingParameters + [
            Param("Primary PHY Options", phyOptions), Param("Secondary PHY Options", phyOptions)],
              returns: [Param("Status", .status), Param(.txPower, "Selected TX Power", .txPower)]),
        .init(0x2082, "LE Set Periodic Advertising Subevent Data", [
            Param("Advertising Handle", .advertisingHandle),
            Param("Subevents", .counted(countBytes: 1, [
                Param(.subevent, "Subevent", .uint(1)), Param("Response Slot Start", .uint(1)), Param("Response Slot Count", .uint(1)),
                Param("Data", .custom(ADFieldSpec.lengthPrefixed))]))],
              returns: [Param("Status", .status), Param("Advertising Handle", .advertisingHandle)]),
        .init(0x2083, "LE Set Periodic Advertising Response Data", [
            Param("Sync Handle", .syncHandle), Param("Request Event", .uint(2)), Param("Request Subevent", .uint(1)),
            Param("Response Subevent", .uint(1)), Param("Response Slot", .uint(1)), Param("Data", .custom(ADFieldSpec.lengthPrefixed))],
              returns: [Param("Status", .status), Param("Sync Handle", .syncHandle)]),
        .init(0x2084, "LE Set Periodic Sync Subevent", [
            Param("Sync Handle", .syncHandle), Param("Properties", .flags(2, HCINames.periodicAdvertisingProperties)),
            Param("Subevents", .counted(countBytes: 1, [Param(.subevent, "Subevent", .uint(1))]))],
              returns: [Param("Status", .status), Param("Sync Handle", .syncHandle)]),
        .init(0x2085, "LE Extended Create Connection v2", [
            Param("Advertising Handle", .advertisingHandle), Param(.subevent, "Subevent", .uint(1)),
            Param(.initiatorFilterPolicy, "Filter Policy", .named(1, HCINames.initiatorFilterPolicy)), Param(.ownAddressType, "Own Address Type", .ownAddressType),
            Param(.peerAddressType, "Peer Address Type", .addressType), Param("Peer Address", .address),
            Param("PHYs", .custom(ExtendedScanSpec.connectionPHYs))]),
        .init(0x2086, "LE Set Periodic Advertising Parameters v2", [
            Param("Advertising Handle", .advertisingHandle), Param("Min Interval", .interval125), Param("Max Interval", .interval125),
            Param("Properties", .flags(2, HCINames.periodicAdvertisingProperties)), Param("Num Subevents", .uint(1)),
            Param("Subevent Interval", .scaled(1, factor: 1.25, unit: "msec")),
            Param("Response Slot Delay", .scaled(1, factor: 1.25, unit: "msec")),
            Param("Response Slot Spacing", .scaled(1, factor: 0.125, unit: "msec")), Param("Num Response Slots", .uint(1))],
              returns: [Param("Status", .status), Param("Advertising Handle", .advertisingHandle)]),
    ]
}
