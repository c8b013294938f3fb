/// Link Policy commands (OGF 0x02), Core v5.4 Vol 4 Part E 7.2. One row per command, in spec order.
/// Rows without `returns` complete with a Command Status event.
enum LinkPolicyCommands {
    static let rows: [MessageEntry] = [
        .init(0x0801, "Hold Mode", [
            Param("Handle", .handle), Param("Hold Mode Max Interval", .slots), Param("Hold Mode Min Interval", .slots)]),
        .init(0x0803, "Sniff Mode", [
            Param("Handle", .handle), Param("Max Interval", .slots), Param("Min Interval", .slots),
            Param("Attempt", .scaled(2, factor: 1.25, unit: "msec")), Param("Timeout", .scaled(2, factor: 1.25, unit: "msec"))]),
        .init(0x0804, "Exit Sniff Mode", [Param("Handle", .handle)]),
        .init(0x0807, "QoS Setup", [
            Param("Handle", .handle), Param("Unused", .hex(1)), Param("Service Type", .named(1, HCINames.serviceType)),
            Param("Token Rate", .uint(4)), Param("Peak Bandwidth", .uint(4)), Param("Latency", .uint(4)),
            Param("Delay Variation", .uint(4))]),
        .init(0x0809, "Role Discovery", [Param("Handle", .handle)],
              returns: [Param("Status", .status), Param("Handle", .handle), Param("Role", .role)]),
        .init(0x080B, "Switch Role", [Param("Address", .address), Param("Role", .role)]),
        .init(0x080C, "Read Link Policy Settings", [Param("Handle", .handle)],
              returns: [Param("Status", .status), Param("Handle", .handle), Param("Link Policy", .flags(2, HCINames.linkPolicy))]),
        .init(0x080D, "Write Link Policy Settings", [Param("Handle", .handle), Param("Link Policy", .flags(2, HCINames.linkPolicy))],
              returns: [Param("Status", .status), Param("Handle", .handle)]),
        .init(0x080E, "Read Default Link Policy Settings", [],
              returns: [Param("Status", .status), Param("Link Policy", .flags(2, HCINames.linkPolicy))]),
        .init(0x080F, "Write Default Link Policy Settings", [Param("Link Policy", .flags(2, HCINames.linkPolicy))],
              returns: [Param("Status", .status)]),
        .init(0x0810, "Flow Specification", [
            Param("Handle", .handle), Param("Unused", .hex(1)), Param("Flow Direction", .named(1, HCINames.flowDirection)),
            Param("Service Type", .named(1, HCINames.serviceType)), Param("Token Rate", .uint(4)),
            Param("Token Bucket Size", .uint(4)), Param("Peak Bandwidth", .uint(4)), Param("Access Latency", .uint(4))]),
        .init(0x0811, "Sniff Subrating", [
            Param("Handle", .handle), Param("Max Latency", .slots), Param("Min Remote Timeout", .slots),
            Param("Min Local Timeout", .slots)], returns: [Param("Status", .status), Param("Handle", .handle)]),
    ]
}
