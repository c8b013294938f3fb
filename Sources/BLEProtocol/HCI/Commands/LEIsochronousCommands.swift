/// LE Controller commands (OGF 0x08) OCF 0x0060–0x0075, Core v5.4 Vol 4 Part E 7.8:
/// ISO buffers, Connected Isochronous Groups and Streams, Broadcast Isochronous
/// Groups, ISO data paths and tests, host features, ISO link quality. One row per command, in spec order.
enum LEIsochronousCommands {
    static let status = LEControllerCommands.status
    static let statusHandle = LEControllerCommands.statusHandle
    static let bigHandle = FieldSpec.uint(1)
    static let cigID = FieldSpec.uint(1)
    /// Max_Transport_Latency, ms.
    static let transportLatency = FieldSpec.scaled(2, factor: 1, unit: "msec")
    static let phyMask = FieldSpec.flags(1, HCINames.phyMask)
    static let sca = FieldSpec.named(1, HCINames.sleepClockAccuracy)
    /// Return parameters of LE Set CIG Parameters (Test): the handles assigned to the CISes.
    static let cigReturns: [Param] = [
        Param("Status", .status), Param("CIG ID", cigID), Param("Handles", .counted(countBytes: 1, [Param("Handle", .handle)]))]
    /// Received/missed/failed SDU counters of the ISO test commands.
    static let testCounters: [Param] = statusHandle + [
        Param("Received SDU Count", .uint(4)), Param("Missed SDU Count", .uint(4)), Param("Failed SDU Count", .uint(4))]

    static let rows: [MessageEntry] = [
        .init(0x2060, "LE Read Buffer Size v2", [], returns: [
            Param("Status", .status), Param("ACL Data Packet Length", .uint(2)), Param("Total Num ACL Data Packets", .uint(1)),
            Param("ISO Data Packet Length", .uint(2)), Param("Total Num ISO Data Packets", .uint(1))]),
        .init(0x2061, "LE Read ISO TX Sync", [Param("Handle", .handle)], returns: statusHandle + [
            Param("Packet Sequence Number", .uint(2)), Param("TX Time Stamp", .scaled(4, factor: 1, unit: "usec")),
            Param("Time Offset", .microseconds24)]),
        .init(0x2062, "LE Set CIG Parameters", [
            Param("CIG ID", cigID), Param("SDU Interval C To P", .microseconds24), Param("SDU Interval P To C", .microseconds24),
            Param("Worst Case SCA", sca), Param("Packing", .named(1, HCINames.packing)), Param("Framing", .named(1, HCINames.framing)),
            Param("Max Transport Latency C To P", transportLatency), Param("Max Transport Latency P To C", transportLatency),
            Param("CIS", .counted(countBytes: 1, [
                Param("CIS ID", .uint(1)), Param("Max SDU C To P", .uint(2)), Param("Max SDU P To C", .uint(2)),
                Param("PHY C To P", phyMask), Param("PHY P To C", phyMask), Param("RTN C To P", .uint(1)),
                Param("RTN P To C", .uint(1))]))], returns: cigReturns),
        .init(0x2063, "LE Set CIG Parameters Test", [
            Param("CIG ID", cigID), Param("SDU Interval C To P", .microseconds24), Param("SDU Interval P To C", .microseconds24),
            Param("FT C To P", .uint(1)), Param("FT P To C", .uint(1)), Param("ISO Interval", .interval125),
            Param("Worst Case SCA", sca), Param("Packing", .named(1, HCINames.packing)), Param("Framing", .named(1, HCINames.framing)),
            Param("CIS", .counted(countBytes: 1, [
                Param("CIS ID", .uint(1)), Param("NSE", .uint(1)), Param("Max SDU C To P", .uint(2)), Param("Max SDU P To C", .uint(2)),
                Param("Max PDU C To P", .uint(2)), Param("Max PDU P To C", .uint(2)), Param("PHY C To P", phyMask),
                Param("PHY P To C", phyMask), Param("BN C To P", .uint(1)), Param("BN P To C", .uint(1))]))], returns: cigReturns),
        .init(0x2064, "LE Create CIS", [Param("CIS", .counted(countBytes: 1, [
            Param("CIS Handle", .handle), Param("ACL Handle", .handle)]))]),
        .init(0x2065, "LE Remove CIG", [Param("CIG ID", cigID)], returns: [Param("Status", .status), Param("CIG ID", cigID)]),
        .init(0x2066, "LE Accept CIS Request", [Param("Handle", .handle)]),
        .init(0x2067, "LE Reject CIS Request", [Param("Handle", .handle), Param(.reason, "Reason", .status)], returns: statusHandle),
        .init(0x2068, "LE Create BIG", [
            Param("BIG Handle", bigHandle), Param("Advertising Handle", .advertisingHandle), Param("Num BIS", .uint(1)),
            Param("SDU Interval", .microseconds24), Param("Max SDU", .uint(2)), Param("Max Transport Latency", transportLatency),
            Param("RTN", .uint(1)), Param("PHY", phyMask), Param("Packing", .named(1, HCINames.packing)),
            Param("Framing", .named(1, HCINames.framing)), Param("Encryption", .named(1, HCINames.bigEncryption)),
            Param("Broadcast Code", .secret(16))]),
        .init(0x2069, "LE Create BIG Test", [
            Param("BIG Handle", bigHandle), Param("Advertising Handle", .advertisingHandle), Param("Num BIS", .uint(1)),
            Param("SDU Interval", .microseconds24), Param("ISO Interval", .interval125), Param("NSE", .uint(1)),
            Param("Max SDU", .uint(2)), Param("Max PDU", .uint(2)), Param("PHY", phyMask), Param("Packing", .named(1, HCINames.packing)),
            Param("Framing", .named(1, HCINames.framing)), Param("BN", .uint(1)), Param("IRC", .uint(1)), Param("PTO", .uint(1)),
            Param("Encryption", .named(1, HCINames.bigEncryption)), Param("Broadcast Code", .secret(16))]),
        .init(0x206A, "LE Terminate BIG", [Param("BIG Handle", bigHandle), Param(.reason, "Reason", .status)]),
        .init(0x206B, "LE BIG Create Sync", [
            Param("BIG Handle", bigHandle), Param("Sync Handle", .syncHandle), Param("Encryption", .named(1, HCINames.bigEncryption)),
            Param("Broadcast Code", .secret(16)), Param("MSE", .uint(1)), Param("Timeout", .supervisionTimeout),
            Param("BIS", .counted(countBytes: 1, [Param("Index", .uint(1))]))]),
        .init(0x206C, "LE BIG Terminate Sync", [Param("BIG Handle", bigHandle)],
              returns: [Param("Status", .status), Param("BIG Handle", bigHandle)]),
        .init(0x206D, "LE Request Peer SCA", [Param("Handle", .handle)]),
        .init(0x206E, "LE Setup ISO Data Path", [
            Param("Handle", .handle), Param("Direction", .named(1, HCINames.dataPathDirection)),
            Param("Data Path ID", .named(1, HCINames.dataPathID)), Param("Codec ID", .codecID),
            Param("Controller Delay", .microseconds24), Param("Codec Configuration", .lengthPrefixedBytes)], returns: statusHandle),
        .init(0x206F, "LE Remove ISO Data Path", [
            Param("Handle", .handle), Param("Direction", .flags(1, HCINames.dataPathDirectionMask))], returns: statusHandle),
        .init(0x2070, "LE ISO Transmit Test", [Param("Handle", .handle), Param("Payload Type", .named(1, HCINames.isoTestPayload))],
              returns: statusHandle),
        .init(0x2071, "LE ISO Receive Test", [Param("Handle", .handle), Param("Payload Type", .named(1, HCINames.isoTestPayload))],
              returns: statusHandle),
        .init(0x2072, "LE ISO Read Test Counters", [Param("Handle", .handle)], returns: testCounters),
        .init(0x2073, "LE ISO Test End", [Param("Handle", .handle)], returns: testCounters),
        .init(0x2074, "LE Set Host Feature", [Param("Bit Number", .named(1, HCINames.leFeatureBit)), Param("Bit Value", .enable)],
              returns: status),
        .init(0x2075, "LE Read ISO Link Quality", [Param("Handle", .handle)], returns: statusHandle + [
            Param("TX UnACKed Packets", .uint(4)), Param("TX Flushed Packets", .uint(4)), Param("TX Last Subevent Packets", .uint(4)),
            Param("Retransmitted Packets", .uint(4)), Param("CRC Error Packets", .uint(4)), Param("RX Unreceived Packets", .uint(4)),
            Param("Duplicate Packets", .uint(4))]),
    ]
}
