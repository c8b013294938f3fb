import BLEBytes

/// Link Control (OGF 0x01), Link Policy (0x02), Controller & Baseband (0x03), Informational (0x04)
/// and Status (0x05) commands, Core v5.4 Vol 4 Part E 7.1–7.5. One row per command, in spec order.
enum BasicCommands {
    static let rows: [MessageEntry] = [
        // 7.1 Link Control
        .init(0x0401, "Inquiry", [Param("LAP", .hex(3)), Param("Length", .scaled(1, factor: 1.28, unit: "s")), Param("Num Responses", .uint(1))]),
        .init(0x0402, "Inquiry Cancel", [], returns: [Param("Status", .status)]),
        .init(0x0405, "Create Connection", [
            Param("Address", .address), Param("Packet Type", .hex(2)), Param("Page Scan Repetition Mode", .uint(1)),
            Param("Reserved", .uint(1)), Param("Clock Offset", .hex(2)), Param("Allow Role Switch", .uint(1))]),
        .init(0x0406, "Disconnect", [Param("Handle", .handle), Param("Reason", .status)]),
        .init(0x0408, "Create Connection Cancel", [Param("Address", .address)],
              returns: [Param("Status", .status), Param("Address", .address)]),
        .init(0x0409, "Accept Connection Request", [Param("Address", .address), Param("Role", .role)]),
        .init(0x040A, "Reject Connection Request", [Param("Address", .address), Param("Reason", .status)]),
        .init(0x040B, "Link Key Request Reply", [Param("Address", .address), Param("Link Key", .secret(16))],
              returns: [Param("Status", .status), Param("Address", .address)]),
        .init(0x040C, "Link Key Request Negative Reply", [Param("Address", .address)],
              returns: [Param("Status", .status), Param("Address", .address)]),
        .init(0x040D, "PIN Code Request Reply", [Param("Address", .address), Param("PIN Length", .uint(1)), Param("PIN Code", .secret(16))],
              returns: [Param("Status", .status), Param("Address", .address)]),
        .init(0x0411, "Authentication Requested", [Param("Handle", .handle)]),
        .init(0x0413, "Set Connection Encryption", [Param("Handle", .handle), Param("Encryption", .enable)]),
        .init(0x0419, "Remote Name Request", [Param("Address", .address), Param("Page Scan Repetition Mode", .uint(1)),
                                              Param("Reserved", .uint(1)), Param("Clock Offset", .hex(2))]),
        .init(0x041B, "Read Remote Supported Features", [Param("Handle", .handle)]),
        .init(0x041D, "Read Remote Version Information", [Param("Handle", .handle)]),
        // 7.3 Controller & Baseband
        .init(0x0C01, "Set Event Mask", [Param("Mask", .hex(8))], returns: [Param("Status", .status)]),
        .init(0x0C03, "Reset", [], returns: [Param("Status", .status)]),
        .init(0x0C05, "Set Event Filter", [Param("Filter", .rest)], returns: [Param("Status", .status)]),
        .init(0x0C13, "Write Local Name", [Param("Name", .text(248))], returns: [Param("Status", .status)]),
        .init(0x0C14, "Read Local Name", [], returns: [Param("Status", .status), Param("Name", .text(248))]),
        .init(0x0C18, "Write Page Timeout", [Param("Timeout", .scaled(2, factor: 0.625, unit: "msec"))], returns: [Param("Status", .status)]),
        .init(0x0C1A, "Write Scan Enable", [Param("Scan Enable", .named(1, NameTable([
            (0, "No scans"), (1, "Inquiry Scan"), (2, "Page Scan"), (3, "Inquiry Scan + Page Scan")])))], returns: [Param("Status", .status)]),
        .init(0x0C23, "Read Class of Device", [], returns: [Param("Status", .status), Param("Class", .hex(3))]),
        .init(0x0C24, "Write Class of Device", [Param("Class", .hex(3))], returns: [Param("Status", .status)]),
        .init(0x0C2D, "Read Transmit Power Level", [Param("Handle", .handle), Param("Type", .uint(1))],
              returns: [Param("Status", .status), Param("Handle", .handle), Param("TX Power", .txPower)]),
        .init(0x0C31, "Set Controller To Host Flow Control", [Param("Flow Control", .hex(1))], returns: [Param("Status", .status)]),
        .init(0x0C33, "Host Buffer Size", [
            Param("ACL MTU", .uint(2)), Param("SCO MTU", .uint(1)), Param("ACL Max Packets", .uint(2)), Param("SCO Max Packets", .uint(2))],
              returns: [Param("Status", .status)]),
        .init(0x0C35, "Host Number of Completed Packets", [Param("Handles", .counted(countBytes: 1, [
            Param("Handle", .handle), Param("Count", .uint(2))]))]),
        .init(0x0C45, "Write Inquiry Mode", [Param("Mode", .uint(1))], returns: [Param("Status", .status)]),
        .init(0x0C52, "Write Extended Inquiry Response", [Param("FEC Required", .uint(1)), Param("Data", .custom(ADFieldSpec.eir240))],
              returns: [Param("Status", .status)]),
        .init(0x0C56, "Write Simple Pairing Mode", [Param("Mode", .enable)], returns: [Param("Status", .status)]),
        .init(0x0C63, "Set Event Mask Page 2", [Param("Mask", .hex(8))], returns: [Param("Status", .status)]),
        .init(0x0C6C, "Read LE Host Supported", [],
              returns: [Param("Status", .status), Param("Supported", .uint(1)), Param("Simultaneous", .uint(1))]),
        .init(0x0C6D, "Write LE Host Supported", [Param("Supported", .uint(1)), Param("Simultaneous", .uint(1))],
              returns: [Param("Status", .status)]),
        .init(0x0C7A, "Write Secure Connections Host Support", [Param("Support", .enable)], returns: [Param("Status", .status)]),
        .init(0x0C7B, "Read Authenticated Payload Timeout", [Param("Handle", .handle)],
              returns: [Param("Status", .status), Param("Handle", .handle), Param("Timeout", .scaled(2, factor: 10, unit: "msec"))]),
        .init(0x0C7C, "Write Authenticated Payload Timeout", [Param("Handle", .handle), Param("Timeout", .scaled(2, factor: 10, unit: "msec"))],
              returns: [Param("Status", .status), Param("Handle", .handle)]),
        // 7.4 Informational parameters
        .init(0x1001, "Read Local Version Information", [], returns: [
            Param("Status", .status), Param("HCI Version", .named(1, HCINames.version)), Param("HCI Revision", .hex(2)),
            Param("LMP Version", .named(1, HCINames.version)), Param("Manufacturer", .custom(CompanySpec.company)),
            Param("LMP Subversion", .hex(2))]),
        .init(0x1002, "Read Local Supported Commands", [], returns: [Param("Status", .status), Param("Commands", .bytes(64))]),
        .init(0x1003, "Read Local Supported Features", [], returns: [Param("Status", .status), Param("Features", .hex(8))]),
        .init(0x1004, "Read Local Extended Features", [Param("Page", .uint(1))], returns: [
            Param("Status", .status), Param("Page", .uint(1)), Param("Max Page", .uint(1)), Param("Features", .hex(8))]),
        .init(0x1005, "Read Buffer Size", [], returns: [
            Param("Status", .status), Param("ACL MTU", .uint(2)), Param("SCO MTU", .uint(1)),
            Param("ACL Max Packets", .uint(2)), Param("SCO Max Packets", .uint(2))]),
        .init(0x1009, "Read BD ADDR", [], returns: [Param("Status", .status), Param("Address", .address)]),
        .init(0x100B, "Read Local Supported Codecs", [], returns: [Param("Status", .status), Param("Codecs", .rest)]),
        // 7.5 Status parameters
        .init(0x1405, "Read RSSI", [Param("Handle", .handle)],
              returns: [Param("Status", .status), Param("Handle", .handle), Param("RSSI", .rssi)]),
    ]
}

/// A company identifier shown by name (Assigned Numbers 7.1).
enum CompanySpec {
    @Sendable static func company(_ r: inout ByteReader) throws(DecodeError) -> FieldValue {
        let id = try r.u16le("Company")
        return .integer(UInt64(id), .named(bytes: 2, CompanyNames.table))
    }
}

/// Company names through the generated assigned-numbers table.
public enum CompanyNames {
    public static let table = NameTable([], fallback: { AssignedNumbers.companyName(UInt16(truncatingIfNeeded: $0)) })
}
