/// Link Control commands (OGF 0x01), Core v5.4 Vol 4 Part E 7.1. One row per command, in spec order.
/// Rows without `returns` complete with a Command Status event.
enum LinkControlCommands {
    static let statusAddress: [Param] = [Param("Status", .status), Param("Address", .address)]

    /// The bandwidth/coding block shared by Enhanced Setup and Enhanced Accept Synchronous Connection
    /// (7.1.45, 7.1.46), after the handle or address.
    static let enhancedSynchronous: [Param] = [
        Param("Transmit Bandwidth", .uint(4)), Param("Receive Bandwidth", .uint(4)),
        Param("Transmit Coding Format", .codecID), Param("Receive Coding Format", .codecID),
        Param("Transmit Codec Frame Size", .uint(2)), Param("Receive Codec Frame Size", .uint(2)),
        Param("Input Bandwidth", .uint(4)), Param("Output Bandwidth", .uint(4)),
        Param("Input Coding Format", .codecID), Param("Output Coding Format", .codecID),
        Param("Input Coded Data Size", .uint(2)), Param("Output Coded Data Size", .uint(2)),
        Param("Input PCM Data Format", .hex(1)), Param("Output PCM Data Format", .hex(1)),
        Param("Input PCM Sample Payload MSB Position", .uint(1)), Param("Output PCM Sample Payload MSB Position", .uint(1)),
        Param("Input Data Path", .hex(1)), Param("Output Data Path", .hex(1)),
        Param("Input Transport Unit Size", .uint(1)), Param("Output Transport Unit Size", .uint(1)),
        Param("Max Latency", .scaled(2, factor: 1, unit: "msec")), Param("Packet Type", .flags(2, HCINames.syncPacketType)),
        Param("Retransmission Effort", .named(1, HCINames.retransmissionEffort)),
    ]

    static let rows: [MessageEntry] = [
        .init(0x0401, "Inquiry", [Param("LAP", .hex(3)), Param("Length", .scaled(1, factor: 1.28, unit: "s")),
                                  Param("Num Responses", .uint(1))]),
        .init(0x0402, "Inquiry Cancel", [], returns: [Param("Status", .status)]),
        .init(0x0403, "Periodic Inquiry Mode", [
            Param("Max Period Length", .scaled(2, factor: 1.28, unit: "s")), Param("Min Period Length", .scaled(2, factor: 1.28, unit: "s")),
            Param("LAP", .hex(3)), Param("Length", .scaled(1, factor: 1.28, unit: "s")), Param("Num Responses", .uint(1))],
              returns: [Param("Status", .status)]),
        .init(0x0404, "Exit Periodic Inquiry Mode", [], returns: [Param("Status", .status)]),
        .init(0x0405, "Create Connection", [
            Param("Address", .address), Param("Packet Type", .flags(2, HCINames.aclPacketType)),
            Param("Page Scan Repetition Mode", .pageScanRepetitionMode), Param("Reserved", .hex(1)),
            Param("Clock Offset", .clockOffset), Param("Allow Role Switch", .named(1, HCINames.allowRoleSwitch))]),
        .init(0x0406, "Disconnect", [Param("Handle", .handle, key: HCIKey.connectionHandle), Param(.reason, "Reason", .status, key: HCIKey.reason)]),
        .init(0x0408, "Create Connection Cancel", [Param("Address", .address)], returns: statusAddress),
        .init(0x0409, "Accept Connection Request", [Param("Address", .address), Param("Role", .named(1, HCINames.acceptRole))]),
        .init(0x040A, "Reject Connection Request", [Param("Address", .address), Param(.reason, "Reason", .status)]),
        .init(0x040B, "Link Key Request Reply", [Param("Address", .address), Param("Link Key", .secret(16))], returns: statusAddress),
        .init(0x040C, "Link Key Request Negative Reply", [Param("Address", .address)], returns: statusAddress),
        .init(0x040D, "PIN Code Request Reply", [Param("Address", .address), Param("PIN Length", .uint(1)), Param("PIN Code", .secret(16))],
              returns: statusAddress),
        .init(0x040E, "PIN Code Request Negative Reply", [Param("Address", .address)], returns: statusAddress),
        .init(0x040F, "Change Connection Packet Type", [Param("Handle", .handle), Param("Packet Type", .flags(2, HCINames.aclPacketType))]),
        .init(0x0411, "Authentication Requested", [Param("Handle", .handle)]),
        .init(0x0413, "Set Connection Encryption", [Param("Handle", .handle), Param("Encryption", .enable)]),
        .init(0x0415, "Change Connection Link Key", [Param("Handle", .handle)]),
        .init(0x0417, "Link Key Selection", [Param("Key Flag", .named(1, HCINames.keyFlag))]),
        .init(0x0419, "Remote Name Request", [
            Param("Address", .address), Param("Page Scan Repetition Mode", .pageScanRepetitionMode),
            Param("Reserved", .hex(1)), Param("Clock Offset", .clockOffset)]),
        .init(0x041A, "Remote Name Request Cancel", [Param("Address", .address)], returns: statusAddress),
        .init(0x041B, "Read Remote Supported Features", [Param("Handle", .handle)]),
        .init(0x041C, "Read Remote Extended Features", [Param("Handle", .handle), Param("Page", .uint(1))]),
        .init(0x041D, "Read Remote Version Information", [Param("Handle", .handle, key: HCIKey.connectionHandle)]),
        .init(0x041F, "Read Clock Offset", [Param("Handle", .handle)]),
        .init(0x0420, "Read LMP Handle", [Param("Handle", .handle)], returns: [
            Param("Status", .status), Param("Handle", .handle), Param("LMP Handle", .uint(1)), Param("Reserved", .hex(4))]),
        .init(0x0428, "Setup Synchronous Connection", [
            Param("Handle", .handle), Param("Transmit Bandwidth", .uint(4)), Param("Receive Bandwidth", .uint(4)),
            Param("Max Latency", .scaled(2, factor: 1, unit: "msec")), Param("Voice Setting", .hex(2)),
            Param("Retransmission Effort", .named(1, HCINames.retransmissionEffort)),
            Param("Packet Type", .flags(2, HCINames.syncPacketType))]),
        .init(0x0429, "Accept Synchronous Connection Request", [
            Param("Address", .address), Param("Transmit Bandwidth", .uint(4)), Param("Receive Bandwidth", .uint(4)),
            Param("Max Latency", .scaled(2, factor: 1, unit: "msec")), Param("Voice Setting", .hex(2)),
            Param("Retransmission Effort", .named(1, HCINames.retransmissionEffort)),
            Param("Packet Type", .flags(2, HCINames.syncPacketType))]),
        .init(0x042A, "Reject Synchronous Connection Request", [Param("Address", .address), Param(.reason, "Reason", .status)]),
        .init(0x042B, "IO Capability Request Reply", [
            Param("Address", .address), Param("IO Capability", .named(1, HCINames.ioCapability)),
            Param("OOB Data", .named(1, HCINames.oobDataPresent)),
            Param("Authentication", .named(1, HCINames.authenticationRequirements))], returns: statusAddress),
        .init(0x042C, "User Confirmation Request Reply", [Param("Address", .address)], returns: statusAddress),
        .init(0x042D, "User Confirmation Request Negative Reply", [Param("Address", .address)], returns: statusAddress),
        .init(0x042E, "User Passkey Request Reply", [Param("Address", .address), Param("Passkey", .secret(4))], returns: statusAddress),
        .init(0x042F, "User Passkey Request Negative Reply", [Param("Address", .address)], returns: statusAddress),
        .init(0x0430, "Remote OOB Data Request Reply", [
            Param("Address", .address), Param("Hash C", .secret(16)), Param("Randomizer R", .secret(16))], returns: statusAddress),
        .init(0x0433, "Remote OOB Data Request Negative Reply", [Param("Address", .address)], returns: statusAddress),
        .init(0x0434, "IO Capability Request Negative Reply", [Param("Address", .address), Param(.reason, "Reason", .status)],
              returns: statusAddress),
        .init(0x043D, "Enhanced Setup Synchronous Connection", [Param("Handle", .handle)] + enhancedSynchronous),
        .init(0x043E, "Enhanced Accept Synchronous Connection Request", [Param("Address", .address)] + enhancedSynchronous),
        .init(0x043F, "Truncated Page", [
            Param("Address", .address), Param("Page Scan Repetition Mode", .pageScanRepetitionMode), Param("Clock Offset", .clockOffset)]),
        .init(0x0440, "Truncated Page Cancel", [Param("Address", .address)], returns: statusAddress),
        .init(0x0441, "Set Connectionless Peripheral Broadcast", [
            Param("Enable", .enable), Param("LT_ADDR", .uint(1)), Param("LPO Allowed", .uint(1)),
            Param("Packet Type", .flags(2, HCINames.aclPacketType)), Param("Interval Min", .slots), Param("Interval Max", .slots),
            Param("Supervision Timeout", .slots)],
              returns: [Param("Status", .status), Param("LT_ADDR", .uint(1)), Param("Interval", .slots)]),
        .init(0x0442, "Set Connectionless Peripheral Broadcast Receive", [
            Param("Enable", .enable), Param("Address", .address), Param("LT_ADDR", .uint(1)), Param("Interval", .slots),
            Param("Clock Offset", .hex(4)), Param("Next Broadcast Clock", .hex(4)), Param("Supervision Timeout", .slots),
            Param("Remote Timing Accuracy", .uint(1)), Param("Skip", .uint(1)), Param("Packet Type", .flags(2, HCINames.aclPacketType)),
            Param("AFH Channel Map", .bytes(10))],
              returns: [Param("Status", .status), Param("Address", .address), Param("LT_ADDR", .uint(1))]),
        .init(0x0443, "Start Synchronization Train"),
        .init(0x0444, "Receive Synchronization Train", [
            Param("Address", .address), Param("Timeout", .slots), Param("Window", .slots), Param("Interval", .slots)]),
        .init(0x0445, "Remote OOB Extended Data Request Reply", [
            Param("Address", .address), Param("C 192", .secret(16)), Param("R 192", .secret(16)),
            Param("C 256", .secret(16)), Param("R 256", .secret(16))], returns: statusAddress),
    ]
}
