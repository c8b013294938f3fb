/// Informational parameters commands (OGF 0x04), Core v5.4 Vol 4 Part E 7.4. One row per command,
/// in spec order; all complete with Command Complete.
enum InformationalCommands {
    /// Codec_ID, Logical_Transport_Type and Direction: the key of the codec queries (7.4.10, 7.4.11).
    static let codecQuery: [Param] = [
        Param("Codec ID", .codecID), Param("Logical Transport", .named(1, HCINames.logicalTransport)),
        Param("Direction", .named(1, HCINames.dataPathDirection))]

    static let rows: [MessageEntry] = [
        .init(0x1001, "Read Local Version Information", [], returns: [
            Param("Status", .status), Param("HCI Version", .named(1, HCINames.version)), Param("HCI Revision", .hex(2)),
            Param("LMP Version", .named(1, HCINames.version)), Param("Manufacturer", .company),
            Param("LMP Subversion", .hex(2))]),
        .init(0x1002, "Read Local Supported Commands", [], returns: [Param("Status", .status), Param("Commands", .bytes(64))]),
        .init(0x1003, "Read Local Supported Features", [], returns: [Param("Status", .status), Param("Features", .hex(8))]),
        .init(0x1004, "Read Local Extended Features", [Param("Page", .uint(1))], returns: [
            Param("Status", .status), Param("Page", .uint(1)), Param("Max Page", .uint(1)), Param("Features", .hex(8))]),
        .init(0x1005, "Read Buffer Size", [], returns: [
            Param("Status", .status), Param("ACL MTU", .uint(2)), Param("SCO MTU", .uint(1)),
            Param("ACL Max Packets", .uint(2)), Param("SCO Max Packets", .uint(2))]),
        .init(0x1009, "Read BD ADDR", [], returns: [Param("Status", .status), Param("Address", .address)]),
        .init(0x100A, "Read Data Block Size", [], returns: [
            Param("Status", .status), Param("Max ACL Data Packet Length", .uint(2)), Param("Data Block Length", .uint(2)),
            Param("Total Num Data Blocks", .uint(2))]),
        .init(0x100B, "Read Local Supported Codecs", [], returns: [
            Param("Status", .status),
            Param("Standard Codecs", .counted(countBytes: 1, [Param("Codec", .named(1, HCINames.codingFormat))])),
            Param("Vendor Codecs", .counted(countBytes: 1, [Param("Company", .company), Param("Vendor Codec ID", .hex(2))]))]),
        .init(0x100C, "Read Local Simple Pairing Options", [], returns: [
            Param("Status", .status), Param("Options", .flags(1, NameTable([(0x01, "Remote public key validation always performed")]))),
            Param("Max Encryption Key Size", .uint(1))]),
        .init(0x100D, "Read Local Supported Codecs v2", [], returns: [
            Param("Status", .status),
            Param("Standard Codecs", .counted(countBytes: 1, [
                Param("Codec", .named(1, HCINames.codingFormat)), Param("Transport", .flags(1, HCINames.codecTransport))])),
            Param("Vendor Codecs", .counted(countBytes: 1, [
                Param("Company", .company), Param("Vendor Codec ID", .hex(2)), Param("Transport", .flags(1, HCINames.codecTransport))]))]),
        .init(0x100E, "Read Local Supported Codec Capabilities", codecQuery, returns: [
            Param("Status", .status), Param("Capabilities", .counted(countBytes: 1, [Param("Capability", .lengthPrefixedBytes)]))]),
        .init(0x100F, "Read Local Supported Controller Delay", codecQuery + [Param("Codec Configuration", .lengthPrefixedBytes)],
              returns: [Param("Status", .status), Param("Min Controller Delay", .microseconds24),
                        Param("Max Controller Delay", .microseconds24)]),
    ]
}
