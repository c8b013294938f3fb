/// Status parameters commands (OGF 0x05), Core v5.4 Vol 4 Part E 7.5, and Testing commands
/// (OGF 0x06), 7.6. One row per command, in spec order; all complete with Command Complete.
enum StatusCommands {
    static let statusHandle: [Param] = [Param("Status", .status), Param("Handle", .handle)]

    static let rows: [MessageEntry] = [
        // 7.5 Status parameters
        .init(0x1401, "Read Failed Contact Counter", [Param("Handle", .handle)], returns: statusHandle + [Param("Counter", .uint(2))]),
        .init(0x1402, "Reset Failed Contact Counter", [Param("Handle", .handle)], returns: statusHandle),
        .init(0x1403, "Read Link Quality", [Param("Handle", .handle)], returns: statusHandle + [Param("Link Quality", .uint(1))]),
        .init(0x1405, "Read RSSI", [Param("Handle", .handle)], returns: statusHandle + [Param(.rssi, "RSSI", .rssi)]),
        .init(0x1406, "Read AFH Channel Map", [Param("Handle", .handle)],
              returns: statusHandle + [Param("Mode", .enable), Param("Channel Map", .bytes(10))]),
        .init(0x1407, "Read Clock", [Param("Handle", .handle), Param("Which Clock", .named(1, HCINames.whichClock))],
              returns: statusHandle + [Param("Clock", .hex(4)), Param("Accuracy", .scaled(2, factor: 0.3125, unit: "msec"))]),
        .init(0x1408, "Read Encryption Key Size", [Param("Handle", .handle)], returns: statusHandle + [Param("Key Size", .uint(1))]),
        .init(0x140D, "Set Triggered Clock Capture", [
            Param("Handle", .handle), Param("Enable", .enable), Param("Which Clock", .named(1, HCINames.whichClock)),
            Param("LPO Allowed", .uint(1)), Param("Num Clock Captures To Filter", .uint(1))], returns: [Param("Status", .status)]),
        // 7.6 Testing
        .init(0x1801, "Read Loopback Mode", [], returns: [Param("Status", .status), Param("Mode", .named(1, HCINames.loopbackMode))]),
        .init(0x1802, "Write Loopback Mode", [Param("Mode", .named(1, HCINames.loopbackMode))], returns: [Param("Status", .status)]),
        .init(0x1803, "Enable Implementation Under Test Mode", [], returns: [Param("Status", .status)]),
        .init(0x1804, "Write Simple Pairing Debug Mode", [Param("Mode", .enable)], returns: [Param("Status", .status)]),
        .init(0x180A, "Write Secure Connections Test Mode", [
            Param("Handle", .handle), Param("DM1 ACL-U Mode", .enable), Param("eSCO Loopback Mode", .enable)], returns: statusHandle),
    ]
}
