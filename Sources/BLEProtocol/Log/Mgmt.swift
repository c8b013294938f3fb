import BLEBytes

/// BlueZ management (mgmt) traffic as the Linux monitor channel records it (`btmon -w`): the
/// control channel open/close records (monitor opcodes 14/15) and the mgmt commands and events
/// that bluetoothd and other clients exchange with the kernel (opcodes 16/17). Each command/event
/// record is a u32 cookie (which mgmt socket), a u16 mgmt opcode or event code, and the mgmt
/// parameters (BlueZ `doc/mgmt-api.txt`); the controller index is the record's adapter index.
/// Names are btmon's (BlueZ 5.66), which are the document's section titles.
public enum Mgmt {
    /// Monitor Control Open (opcode 14): u32 cookie, u16 format, u8 version, u16 revision,
    /// u32 flags, u8 ident length, ident. btmon: `MGMT Open: bluetoothd (privileged) version 1.22`.
    public static func open(_ r: inout ByteReader) -> Layer {
        var layer = LogRecords.message("Control Open", [
            Param("Cookie", .hex(4)), Param("Format", .named(2, formatNames)), Param("Version", .uint(1)),
            Param("Revision", .uint(2)), Param("Flags", .flags(4, openFlags)), Param("Ident", .custom(ident))], &r)
        guard layer.error == nil, layer.fields.count == 6,
              case let .integer(cookie, _) = layer.fields[0].value, case let .integer(format, _) = layer.fields[1].value,
              case let .integer(version, _) = layer.fields[2].value, case let .integer(revision, _) = layer.fields[3].value,
              case let .integer(flags, _) = layer.fields[4].value, case let .text(ident) = layer.fields[5].value else { return layer }
        let channel = formatNames.staticName(format)?.description ?? "Format 0x\(Hex.pad(format, 4))"
        let privilege = flags & 1 != 0 ? "privileged" : "unprivileged"
        // btmon shows the version for the control (mgmt) format only.
        let versionText = format == 2 ? " version \(version).\(revision)" : ""
        layer.line = "\(channel) Open: \(ident) (\(privilege))\(versionText) {0x\(Hex.pad(cookie, 4))}"
        return layer
    }

    /// Monitor Control Close (opcode 15): u32 cookie.
    public static func close(_ r: inout ByteReader) -> Layer {
        var layer = LogRecords.message("Control Close", [Param("Cookie", .hex(4))], &r)
        if layer.error == nil, case let .integer(cookie, _)? = layer.fields.first?.value {
            layer.line = "MGMT Close: {0x\(Hex.pad(cookie, 4))}"
        }
        return layer
    }

    /// Monitor Control Command (opcode 16): `MGMT Command: Set Powered (0x0005) plen 1`.
    public static func command(_ r: inout ByteReader) -> Layer {
        message("MGMT Command", table: commands, names: commandNames, &r) { entry in entry.parameters }
    }

    /// Monitor Control Event (opcode 17): `MGMT Event: Command Complete (0x0001) plen 7`; a
    /// Command Complete's return parameters are decoded by the row of the command it completes.
    public static func event(_ r: inout ByteReader) -> Layer {
        message("MGMT Event", table: events, names: eventNames, &r) { entry in entry.parameters }
    }

    private static func message(_ proto: StaticString, table: MessageTable, names: NameTable, _ r: inout ByteReader,
                                parameters: (MessageEntry) -> [Param]) -> Layer {
        var layer = Layer(protocolName: proto, name: "Malformed", code: "")
        guard let cookie = try? r.u32le("Cookie"), let code = try? r.u16le("Opcode") else {
            layer.error = DecodeError(kind: .truncated(needed: 6, available: r.remaining), offset: r.absoluteOffset, field: "Control header")
            return layer
        }
        layer.name = names.staticName(UInt64(code))?.description ?? "Unknown"
        layer.code = "0x\(Hex.pad(code, 4))"
        layer.length = r.remaining
        layer.fields = [Field("Cookie", .integer(UInt64(cookie), .hex(bytes: 4)))]
        var p = r.rest()
        if proto.utf8CodeUnitCount == 10, code == 0x0001 {   // "MGMT Event": Command Complete
            commandComplete(&p, into: &layer)
        } else if let entry = table[code] {
            apply(parameters(entry), &p, to: &layer)
        } else if p.remaining > 0 {
            layer.fields.append(Field("Parameters", .bytes(Array(p.rest().bytes))))
        }
        return layer
    }

    /// Command Complete (event 0x0001): u16 command opcode, u8 status, the command's return parameters.
    private static func commandComplete(_ p: inout ByteReader, into layer: inout Layer) {
        apply([Param("Command", .named(2, commandNames)), Param("Status", .named(1, statusNames))], &p, to: &layer, trailing: false)
        guard layer.error == nil, case let .integer(op, _) = layer.fields[1].value else { return }
        if let returns = commands[UInt16(op)]?.returns, p.remaining > 0 {
            apply(returns, &p, to: &layer)
        } else if p.remaining > 0 {
            layer.fields.append(Field("Return Parameters", .bytes(Array(p.rest().bytes))))
        }
    }

    private static func apply(_ params: [Param], _ p: inout ByteReader, to layer: inout Layer, trailing: Bool = true) {
        if trailing {
            let (fields, error, notes) = FieldDecoder.decodeMessage(params, &p)
            layer.fields += fields
            layer.error = layer.error ?? error
            layer.notes += notes
        } else {
            let (fields, error) = FieldDecoder.decodeAll(params, &p)
            layer.fields += fields
            layer.error = layer.error ?? error
        }
    }

    /// The command's name for an opcode, `Unknown` when not listed.
    public static func commandName(_ opcode: UInt16) -> String { commandNames.staticName(UInt64(opcode))?.description ?? "Unknown" }
    /// The event's name for an event code, `Unknown` when not listed.
    public static func eventName(_ code: UInt16) -> String { eventNames.staticName(UInt64(code))?.description ?? "Unknown" }

    public static let commands = MessageTable(MgmtTables.commands)
    public static let events = MessageTable(MgmtTables.events)
    static let commandNames = NameTable(MgmtTables.commands.map { (UInt64($0.code), $0.name) })
    static let eventNames = NameTable(MgmtTables.events.map { (UInt64($0.code), $0.name) })

    /// `doc/mgmt-api.txt` "Error Codes".
    public static let statusNames = NameTable([
        (0x00, "Success"), (0x01, "Unknown Command"), (0x02, "Not Connected"), (0x03, "Failed"), (0x04, "Connect Failed"),
        (0x05, "Authentication Failed"), (0x06, "Not Paired"), (0x07, "No Resources"), (0x08, "Timeout"),
        (0x09, "Already Connected"), (0x0A, "Busy"), (0x0B, "Rejected"), (0x0C, "Not Supported"), (0x0D, "Invalid Parameters"),
        (0x0E, "Disconnected"), (0x0F, "Not Powered"), (0x10, "Cancelled"), (0x11, "Invalid Index"), (0x12, "RFKilled"),
        (0x13, "Already Paired"), (0x14, "Permission Denied"),
    ])

    /// Monitor control-open formats (Linux `hci_mon.h`): the kind of socket that was opened.
    static let formatNames = NameTable([(0, "RAW"), (1, "USER"), (2, "MGMT")])
    static let openFlags = NameTable([(0x0001, "Privileged")])

    /// The ident of a control open: u8 length, then that many bytes (NUL-padded).
    @Sendable static func ident(_ r: inout ByteReader) throws(DecodeError) -> FieldValue {
        let n = try r.u8("Ident Length")
        return .text(LogRecords.cString(try r.copy(Int(n), "Ident")))
    }
}
