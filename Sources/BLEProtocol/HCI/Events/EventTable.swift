/// HCI events, Core v5.4 Vol 4 Part E 7.7 (LE Meta subevents are in `LEMetaTable`; Command Complete
/// and Command Status are decoded by `HCIDecoder` because their return parameters depend on the
/// command). One row per event, in spec order. Names follow btmon where it has one.
///
/// Arrays of structures (Inquiry Result, Number Of Completed Packets…) are interleaved per item on
/// the wire, as every controller sends them (Core v5.4 Vol 4 Part E 5.2).
enum EventTable {
    static let statusHandle: [Param] = [Param("Status", .status, key: "Status"), Param("Handle", .handle, key: HCIKey.connectionHandle)]

    static let rows: [MessageEntry] = [
        .init(0x01, "Inquiry Complete", [Param("Status", .status)]),
        .init(0x02, "Inquiry Result", [Param("Responses", .counted(countBytes: 1, [
            Param("Address", .address), Param("Page Scan Repetition Mode", .pageScanRepetitionMode), Param("Reserved", .hex(2)),
            Param("Class", .classOfDevice), Param("Clock Offset", .clockOffset)]))]),
        .init(0x03, "Connect Complete", statusHandle + [
            Param("Address", .address), Param("Link Type", .named(1, HCINames.linkType)), Param("Encryption", .enable)]),
        .init(0x04, "Connect Request", [Param("Address", .address), Param("Class", .classOfDevice),
                                        Param("Link Type", .named(1, HCINames.linkType))]),
        .init(0x05, "Disconnect Complete", statusHandle + [Param(.reason, "Reason", .status, key: HCIKey.reason)]),
        .init(0x06, "Auth Complete", statusHandle),
        .init(0x07, "Remote Name Req Complete", [Param("Status", .status), Param("Address", .address), Param("Name", .text(248))]),
        .init(0x08, "Encryption Change", statusHandle + [Param("Encryption", .named(1, HCINames.encryption), key: "Encryption_Enabled")]),
        .init(0x09, "Change Connection Link Key Complete", statusHandle),
        .init(0x0A, "Link Key Type Changed", statusHandle + [Param("Key Flag", .named(1, HCINames.keyFlag))]),
        .init(0x0B, "Read Remote Supported Features", statusHandle + [Param("Features", .hex(8))]),
        .init(0x0C, "Read Remote Version Complete", statusHandle + [
            Param("LMP Version", .named(1, HCINames.version)), Param("Manufacturer", .company), Param("Subversion", .hex(2))]),
        .init(0x0D, "QoS Setup Complete", statusHandle + [
            Param("Unused", .hex(1)), Param("Service Type", .named(1, HCINames.serviceType)), Param("Token Rate", .uint(4)),
            Param("Peak Bandwidth", .uint(4)), Param("Latency", .uint(4)), Param("Delay Variation", .uint(4))]),
        .init(0x10, "Hardware Error", [Param("Code", .hex(1), key: "Hardware_Code")]),
        .init(0x11, "Flush Occurred", [Param("Handle", .handle)]),
        .init(0x12, "Role Change", [Param("Status", .status), Param("Address", .address), Param("Role", .role)]),
        .init(0x13, "Number of Completed Packets", [Param("Handles", .counted(countBytes: 1, [
            Param("Handle", .handle, key: HCIKey.connectionHandle), Param("Count", .uint(2), key: HCIKey.numCompletedPackets)]), key: HCIKey.numHandles)]),
        .init(0x14, "Mode Change", statusHandle + [Param("Mode", .named(1, HCINames.currentMode)), Param("Interval", .slots)]),
        .init(0x15, "Return Link Keys", [Param("Keys", .counted(countBytes: 1, [Param("Address", .address), Param("Link Key", .secret(16))]))]),
        .init(0x16, "PIN Code Request", [Param("Address", .address)]),
        .init(0x17, "Link Key Request", [Param("Address", .address)]),
        .init(0x18, "Link Key Notification", [
            Param("Address", .address, key: "BD_ADDR"), Param("Link Key", .secret(16), key: "Link_Key"),
            Param("Key Type", .named(1, HCINames.keyType), key: "Key_Type")]),
        .init(0x19, "Loopback Command", [Param("Command", .rest)]),
        .init(0x1A, "Data Buffer Overflow", [Param("Link Type", .named(1, HCINames.linkType))]),
        .init(0x1B, "Max Slots Change", [Param("Handle", .handle), Param("Max Slots", .uint(1))]),
        .init(0x1C, "Read Clock Offset Complete", statusHandle + [Param("Clock Offset", .clockOffset)]),
        .init(0x1D, "Connection Packet Type Changed", statusHandle + [Param("Packet Type", .hex(2))]),
        .init(0x1E, "QoS Violation", [Param("Handle", .handle)]),
        .init(0x20, "Page Scan Repetition Mode Change", [
            Param("Address", .address), Param("Page Scan Repetition Mode", .pageScanRepetitionMode)]),
        .init(0x21, "Flow Specification Complete", statusHandle + [
            Param("Unused", .hex(1)), Param("Flow Direction", .named(1, HCINames.flowDirection)),
            Param("Service Type", .named(1, HCINames.serviceType)), Param("Token Rate", .uint(4)),
            Param("Token Bucket Size", .uint(4)), Param("Peak Bandwidth", .uint(4)), Param("Access Latency", .uint(4))]),
        .init(0x22, "Inquiry Result with RSSI", [Param("Responses", .counted(countBytes: 1, [
            Param("Address", .address), Param("Page Scan Repetition Mode", .pageScanRepetitionMode), Param("Reserved", .hex(1)),
            Param("Class", .classOfDevice), Param("Clock Offset", .clockOffset), Param(.rssi, "RSSI", .rssi)]))]),
        .init(0x23, "Read Remote Extended Features", statusHandle + [
            Param("Page", .uint(1), key: "Page_Number"), Param("Max Page", .uint(1), key: "Maximum_Page_Number"),
            Param("Features", .hex(8), key: "Extended_LMP_Features")]),
        .init(0x2C, "Synchronous Connect Complete", statusHandle + [
            Param("Address", .address, key: "BD_ADDR"), Param("Link Type", .named(1, HCINames.linkType), key: "Link_Type"),
            Param("Transmission Interval", .uint(1), key: "Transmission_Interval"), Param("Retransmission Window", .uint(1), key: "Retransmission_Window"),
            Param("RX Packet Length", .uint(2), key: "RX_Packet_Length"), Param("TX Packet Length", .uint(2), key: "TX_Packet_Length"),
            Param("Air Mode", .named(1, HCINames.airMode), key: "Air_Mode")]),
        .init(0x2D, "Synchronous Connect Changed", statusHandle + [
            Param("Transmission Interval", .uint(1)), Param("Retransmission Window", .uint(1)),
            Param("RX Packet Length", .uint(2)), Param("TX Packet Length", .uint(2))]),
        .init(0x2E, "Sniff Subrating", statusHandle + [
            Param("Max TX Latency", .slots), Param("Max RX Latency", .slots), Param("Min Remote Timeout", .slots),
            Param("Min Local Timeout", .slots)]),
        .init(0x2F, "Extended Inquiry Result", [
            Param("Num Responses", .uint(1)), Param("Address", .address), Param("Page Scan Repetition Mode", .pageScanRepetitionMode),
            Param("Reserved", .hex(1)), Param("Class", .classOfDevice), Param("Clock Offset", .clockOffset), Param(.rssi, "RSSI", .rssi),
            Param("Data", .custom(ADFieldSpec.eir240))]),
        .init(0x30, "Encryption Key Refresh Complete", statusHandle),
        .init(0x31, "IO Capability Request", [Param("Address", .address)]),
        .init(0x32, "IO Capability Response", [
            Param("Address", .address, key: "BD_ADDR"), Param("IO Capability", .named(1, HCINames.ioCapability), key: "IO_Capability"),
            Param("OOB Data", .named(1, HCINames.oobDataPresent), key: "OOB_Data_Present"),
            Param("Authentication", .named(1, HCINames.authenticationRequirements), key: "Authentication_Requirements")]),
        .init(0x33, "User Confirmation Request", [Param("Address", .address), Param("Passkey", .secret(4))]),
        .init(0x34, "User Passkey Request", [Param("Address", .address)]),
        .init(0x35, "Remote OOB Data Request", [Param("Address", .address)]),
        .init(0x36, "Simple Pairing Complete", [Param("Status", .status), Param("Address", .address)]),
        .init(0x38, "Link Supervision Timeout Change", [Param("Handle", .handle), Param("Timeout", .slots)]),
        .init(0x39, "Enhanced Flush Complete", [Param("Handle", .handle)]),
        .init(0x3B, "User Passkey Notification", [Param("Address", .address), Param("Passkey", .secret(4))]),
        .init(0x3C, "Keypress Notification", [Param("Address", .address), Param("Type", .named(1, HCINames.keypressNotification))]),
        .init(0x3D, "Remote Host Supported Features", [Param("Address", .address), Param("Features", .hex(8))]),
        .init(0x48, "Number of Completed Data Blocks", [
            Param("Total Num Data Blocks", .uint(2)),
            Param("Handles", .counted(countBytes: 1, [
                Param("Handle", .handle), Param("Num Completed Packets", .uint(2)), Param("Num Completed Blocks", .uint(2))]))]),
        .init(0x4E, "Triggered Clock Capture", [
            Param("Handle", .handle), Param("Which Clock", .named(1, HCINames.whichClock)), Param("Clock", .hex(4)),
            Param("Slot Offset", .uint(2))]),
        .init(0x4F, "Synchronization Train Complete", [Param("Status", .status)]),
        .init(0x50, "Synchronization Train Received", [
            Param("Status", .status), Param("Address", .address), Param("Clock Offset", .hex(4)), Param("AFH Channel Map", .bytes(10)),
            Param("LT_ADDR", .uint(1)), Param("Next Broadcast Instant", .hex(4)), Param("Interval", .slots),
            Param("Service Data", .hex(1))]),
        .init(0x51, "Connectionless Peripheral Broadcast Receive", [
            Param("Address", .address), Param("LT_ADDR", .uint(1)), Param("Clock", .hex(4)), Param("Offset", .hex(4)),
            Param("Receive Status", .named(1, NameTable([(0, "Packet received"), (1, "Packet not received")]))),
            Param("Fragment", .hex(1)), Param("Data", .lengthPrefixedBytes)]),
        .init(0x52, "Connectionless Peripheral Broadcast Timeout", [Param("Address", .address), Param("LT_ADDR", .uint(1))]),
        .init(0x53, "Truncated Page Complete", [Param("Status", .status), Param("Address", .address)]),
        .init(0x54, "Peripheral Page Response Timeout"),
        .init(0x55, "Connectionless Peripheral Broadcast Channel Map Change", [Param("Channel Map", .bytes(10))]),
        .init(0x56, "Inquiry Response Notification", [Param("LAP", .hex(3)), Param(.rssi, "RSSI", .rssi)]),
        .init(0x57, "Authenticated Payload Timeout Expired", [Param("Handle", .handle)]),
        .init(0x58, "SAM Status Change", [
            Param("Handle", .handle), Param("Local SAM Index", .uint(1)), Param("Local SAM TX Availability", .uint(1)),
            Param("Local SAM RX Availability", .uint(1)), Param("Remote SAM Index", .uint(1)),
            Param("Remote SAM TX Availability", .uint(1)), Param("Remote SAM RX Availability", .uint(1))]),
        .init(0x59, "Encryption Change v2", statusHandle + [
            Param("Encryption", .named(1, HCINames.encryption), key: "Encryption_Enabled"), Param("Key Size", .uint(1), key: "Encryption_Key_Size")]),
        .init(0xFF, "Vendor", [Param("Data", .rest)]),
    ]
}
