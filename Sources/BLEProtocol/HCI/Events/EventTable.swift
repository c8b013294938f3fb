import BLEBytes

/// HCI events, Core v5.4 Vol 4 Part E 7.7 (LE Meta subevents are in `LEMetaTable`; Command Complete
/// and Command Status are decoded by `HCIDecoder` because their return parameters depend on the
/// command). One row per event, in spec order.
enum EventTable {
    static let rows: [MessageEntry] = [
        .init(0x01, "Inquiry Complete", [Param("Status", .status)]),
        .init(0x02, "Inquiry Result", [Param("Responses", .rest)]),
        .init(0x03, "Connect Complete", [
            Param("Status", .status), Param("Handle", .handle), Param("Address", .address),
            Param("Link Type", .named(1, HCINames.linkType)), Param("Encryption", .enable)]),
        .init(0x04, "Connect Request", [Param("Address", .address), Param("Class", .hex(3)), Param("Link Type", .named(1, HCINames.linkType))]),
        .init(0x05, "Disconnect Complete", [Param("Status", .status), Param("Handle", .handle), Param("Reason", .status)]),
        .init(0x06, "Auth Complete", [Param("Status", .status), Param("Handle", .handle)]),
        .init(0x07, "Remote Name Req Complete", [Param("Status", .status), Param("Address", .address), Param("Name", .text(248))]),
        .init(0x08, "Encryption Change", [Param("Status", .status), Param("Handle", .handle), Param("Encryption", .named(1, HCINames.encryption))]),
        .init(0x09, "Change Connection Link Key Complete", [Param("Status", .status), Param("Handle", .handle)]),
        .init(0x0B, "Read Remote Supported Features", [Param("Status", .status), Param("Handle", .handle), Param("Features", .hex(8))]),
        .init(0x0C, "Read Remote Version Complete", [
            Param("Status", .status), Param("Handle", .handle), Param("LMP Version", .named(1, HCINames.version)),
            Param("Manufacturer", .custom(CompanySpec.company)), Param("Subversion", .hex(2))]),
        .init(0x0D, "QoS Setup Complete", [Param("Parameters", .rest)]),
        .init(0x10, "Hardware Error", [Param("Code", .hex(1))]),
        .init(0x11, "Flush Occurred", [Param("Handle", .handle)]),
        .init(0x12, "Role Change", [Param("Status", .status), Param("Address", .address), Param("Role", .role)]),
        .init(0x13, "Number of Completed Packets", [Param("Handles", .counted(countBytes: 1, [
            Param("Handle", .handle), Param("Count", .uint(2))]))]),
        .init(0x14, "Mode Change", [Param("Status", .status), Param("Handle", .handle), Param("Mode", .uint(1)), Param("Interval", .uint(2))]),
        .init(0x15, "Return Link Keys", [Param("Keys", .counted(countBytes: 1, [Param("Address", .address), Param("Link Key", .secret(16))]))]),
        .init(0x16, "PIN Code Request", [Param("Address", .address)]),
        .init(0x17, "Link Key Request", [Param("Address", .address)]),
        .init(0x18, "Link Key Notification", [Param("Address", .address), Param("Link Key", .secret(16)), Param("Key Type", .uint(1))]),
        .init(0x1A, "Data Buffer Overflow", [Param("Link Type", .named(1, HCINames.linkType))]),
        .init(0x1B, "Max Slots Change", [Param("Handle", .handle), Param("Max Slots", .uint(1))]),
        .init(0x1C, "Read Clock Offset Complete", [Param("Status", .status), Param("Handle", .handle), Param("Clock Offset", .hex(2))]),
        .init(0x1D, "Connection Packet Type Changed", [Param("Status", .status), Param("Handle", .handle), Param("Packet Type", .hex(2))]),
        .init(0x20, "Page Scan Repetition Mode Change", [Param("Address", .address), Param("Mode", .uint(1))]),
        .init(0x22, "Inquiry Result with RSSI", [Param("Responses", .rest)]),
        .init(0x23, "Read Remote Extended Features", [
            Param("Status", .status), Param("Handle", .handle), Param("Page", .uint(1)), Param("Max Page", .uint(1)), Param("Features", .hex(8))]),
        .init(0x2C, "Synchronous Connect Complete", [Param("Parameters", .rest)]),
        .init(0x2F, "Extended Inquiry Result", [
            Param("Num Responses", .uint(1)), Param("Address", .address), Param("Page Scan Repetition Mode", .uint(1)),
            Param("Reserved", .uint(1)), Param("Class", .hex(3)), Param("Clock Offset", .hex(2)), Param("RSSI", .rssi),
            Param("Data", .custom(ADFieldSpec.eir240))]),
        .init(0x30, "Encryption Key Refresh Complete", [Param("Status", .status), Param("Handle", .handle)]),
        .init(0x31, "IO Capability Request", [Param("Address", .address)]),
        .init(0x32, "IO Capability Response", [Param("Address", .address), Param("IO Capability", .uint(1)),
                                                Param("OOB Data", .uint(1)), Param("Authentication", .hex(1))]),
        .init(0x33, "User Confirmation Request", [Param("Address", .address), Param("Passkey", .secret(4))]),
        .init(0x34, "User Passkey Request", [Param("Address", .address)]),
        .init(0x36, "Simple Pairing Complete", [Param("Status", .status), Param("Address", .address)]),
        .init(0x38, "Link Supervision Timeout Change", [Param("Handle", .handle), Param("Timeout", .scaled(2, factor: 0.625, unit: "msec"))]),
        .init(0x3B, "User Passkey Notification", [Param("Address", .address), Param("Passkey", .secret(4))]),
        .init(0x3D, "Remote Host Supported Features", [Param("Address", .address), Param("Features", .hex(8))]),
        .init(0x57, "Authenticated Payload Timeout Expired", [Param("Handle", .handle)]),
        .init(0x59, "Encryption Change v2", [
            Param("Status", .status), Param("Handle", .handle), Param("Encryption", .named(1, HCINames.encryption)),
            Param("Key Size", .uint(1))]),
        .init(0xFF, "Vendor", [Param("Data", .rest)]),
    ]
}
