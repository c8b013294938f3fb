import BLEBytes

/// Records of a capture that are not HCI packets: BlueZ monitor bookkeeping (Linux
/// `include/net/bluetooth/hci_mon.h`, BlueZ `monitor/control.c`) and PacketLogger's own records
/// (syslog lines from bluetoothd/CoreBluetooth, notes, power). Decoded for display; none throw.
public enum LogRecords {
    /// Monitor New Index (opcode 0): u8 type, u8 bus, BD_ADDR, char name[8].
    /// btmon: `New Index: E8:48:B8:C8:20:00 (Primary,USB,hci0)`.
    public static func newIndex(_ r: inout ByteReader) -> Layer {
        var layer = message("New Index", [
            Param("Type", .named(1, indexTypes)), Param(.adapterBus, "Bus", .named(1, busNames)), Param(.adapterAddress, "Address", .address), Param(.adapterName, "Name", .text(8))], &r)
        if layer.error == nil, layer.fields.count == 4, case let .integer(type, _) = layer.fields[0].value,
           case let .integer(bus, _) = layer.fields[1].value, case let .address(a, _) = layer.fields[2].value,
           case let .text(name) = layer.fields[3].value {
            let typeName = indexTypes.staticName(type)?.description ?? "0x\(Hex.pad(type, 2))"
            let busName = busNames.staticName(bus)?.description ?? "0x\(Hex.pad(bus, 2))"
            layer.line = "New Index: \(a) (\(typeName),\(busName),\(name))"
        }
        return layer
    }

    /// Monitor Index Info (opcode 10): BD_ADDR, u16 manufacturer. btmon: `Index Info: E8:48:B8:C8:20:00 (Realtek Semiconductor Corporation)`.
    public static func indexInfo(_ r: inout ByteReader) -> Layer {
        var layer = message("Index Info", [Param(.adapterAddress, "Address", .address), Param(.manufacturer, "Manufacturer", .custom(CompanySpec.company))], &r)
        if layer.error == nil, layer.fields.count == 2, case let .address(a, _) = layer.fields[0].value,
           case let .integer(company, _) = layer.fields[1].value {
            layer.line = "Index Info: \(a) (\(AssignedNumbers.companyName(UInt16(truncatingIfNeeded: company)) ?? "Company 0x\(Hex.pad(company, 4))"))"
        }
        return layer
    }

    /// The manufacturer of a monitor Index Info record (`indexInfo`: after the BD_ADDR); nil when short.
    public static func indexInfoManufacturer(_ r: ByteReader) -> UInt16? { r.getU16le(at: 6) }   // after the 6-byte BD_ADDR

    /// The mgmt opcode or event code of a monitor control command or event record (after the u32
    /// cookie, `Mgmt`); nil when short.
    public static func controlCode(_ r: ByteReader) -> UInt16? { r.getU16le(at: 4) }

    /// Monitor Open/Close/Delete Index (opcodes 8, 9, 1): no parameters; one line.
    public static func index(_ name: StaticString) -> Layer {
        Layer(protocolName: "Log", name: name.description, code: "", line: name.description)
    }

    /// Monitor User Logging (opcode 13): u8 priority, u8 ident length, ident, message.
    public static func userLogging(_ r: inout ByteReader) -> Layer {
        var layer = Layer(protocolName: "Log", name: "User Logging", code: "")
        do {
            let priority = try r.u8("Priority")
            let identLength = try r.u8("Ident Length")
            let ident = cString(try r.copy(Int(identLength), "Ident"))
            let text = cString(Array(r.rest().bytes))
            layer.fields = [Field("Priority", .integer(UInt64(priority), .named(bytes: 1, priorityNames))),
                            Field("Ident", .text(ident)), Field("Message", .text(text))]
            layer.line = "\(ident): \(text.oneLine)"   // btmon: `= bluetoothd: Terminating`
        } catch { layer.error = error }
        return layer
    }

    /// A record whose whole payload is text (monitor System Note, PacketLogger notes and power):
    /// one line, `Note: Linux version 6.1.19` as btmon prints a system note.
    public static func text(_ name: StaticString, _ r: inout ByteReader) -> Layer {
        let text = cString(Array(r.rest().bytes)).trimmingTrailingNewlines()
        let title = name.description == "System Note" ? "Note" : name.description
        return Layer(protocolName: "Log", name: name.description, code: "", fields: [Field("Text", .text(text))],
                     line: "\(title): \(text.oneLine)")
    }

    /// PacketLogger syslog record (type 0xF7): u32 pid, u8 level, then NUL-terminated process,
    /// sender, subsystem, category and message. This is bluetoothd's and CoreBluetooth's own log.
    public static func syslog(_ r: inout ByteReader) -> Layer {
        var layer = Layer(protocolName: "Log", name: "Syslog", code: "")
        do {
            let pid = try r.u32le("PID")
            let level = try r.u8("Level")
            var strings: [String] = []
            var rest = Array(r.rest().bytes)
            while strings.count < 5, !rest.isEmpty {
                let end = rest.firstIndex(of: 0) ?? rest.count
                strings.append(String(decoding: rest[..<end], as: UTF8.self))
                rest = end < rest.count ? Array(rest[(end + 1)...]) : []
            }
            let names: [StaticString] = ["Process", "Sender", "Subsystem", "Category", "Message"]
            layer.fields = [Field("PID", .integer(UInt64(pid), .decimal(bytes: 4))),
                            Field("Level", .integer(UInt64(level), .hex(bytes: 1)))]
            for (i, s) in strings.enumerated() { layer.fields.append(Field(names[i], .text(s))) }
            // One line: `bluetoothd: message` (the process, then the message; subsystem and
            // category stay in the JSON fields).
            let process = strings.first ?? ""
            let message = strings.count == 5 ? strings[4].oneLine : ""
            layer.line = "\(process.isEmpty ? "syslog" : process)[\(pid)]: \(message)"
        } catch { layer.error = error }
        return layer
    }

    /// Where the message of a PacketLogger syslog record (`syslog`) starts: after the PID, the level
    /// and the first four NUL-terminated strings (or after as many as there are); nil when the record
    /// holds no more than PID and level.
    public static func syslogMessageStart(_ r: ByteReader) -> Int? {
        let header = 5   // u32 pid, u8 level
        guard r.bytes.count > header else { return nil }
        var starts = [header]
        for i in header ..< r.bytes.count where r.getU8(at: i) == 0 && i + 1 < r.bytes.count { starts.append(i + 1) }
        return starts[min(4, starts.count - 1)]
    }

    /// Where the message of a monitor User Logging record (`userLogging`) starts: after priority,
    /// ident length and ident; nil when there is no message.
    public static func userLoggingMessageStart(_ r: ByteReader) -> Int? {
        guard let identLength = r.getU8(at: 1) else { return nil }
        let start = 2 + Int(identLength)
        return start < r.bytes.count ? start : nil
    }

    /// A record kept raw; printable text is shown as text.
    public static func raw(_ name: String, _ r: inout ByteReader) -> Layer {
        let bytes = Array(r.rest().bytes)
        let printable = !bytes.isEmpty && bytes.allSatisfy { ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x0A || $0 == 0 }
        guard printable else { return Layer(protocolName: "Log", name: name, code: "", fields: [Field("Data", .bytes(bytes))]) }
        let text = cString(bytes).trimmingTrailingNewlines()
        return Layer(protocolName: "Log", name: name, code: "", fields: [Field("Text", .text(text))], line: "\(name): \(text.oneLine)")
    }

    static func message(_ name: StaticString, _ params: [Param], _ r: inout ByteReader) -> Layer {
        let (fields, error, notes) = FieldDecoder.decodeMessage(params, &r)
        return Layer(protocolName: "Log", name: name.description, code: "", fields: fields, error: error, notes: notes)
    }

    static func cString(_ bytes: [UInt8]) -> String {
        let end = bytes.firstIndex(of: 0) ?? bytes.count
        return String(decoding: bytes[..<end], as: UTF8.self)
    }

    static let indexTypes = NameTable([(0, "Primary"), (1, "AMP")])
    static let busNames = NameTable([
        (0, "Virtual"), (1, "USB"), (2, "PC Card"), (3, "UART"), (4, "RS232"), (5, "PCI"), (6, "SDIO"), (7, "SPI"), (8, "I2C"), (9, "SMD"),
        (10, "VIRTIO"), (11, "IPC"),
    ])
    /// syslog(3) priorities.
    static let priorityNames = NameTable([
        (0, "Emergency"), (1, "Alert"), (2, "Critical"), (3, "Error"), (4, "Warning"), (5, "Notice"), (6, "Info"), (7, "Debug"),
    ])
}

extension String {
    /// The text on one line: trailing line breaks dropped, inner ones made spaces.
    var oneLine: String {
        let t = trimmingTrailingNewlines()
        return t.contains(where: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" })
            ? String(t.map { $0 == "\n" || $0 == "\r" || $0 == "\r\n" ? " " : $0 }) : t
    }

    func trimmingTrailingNewlines() -> String {
        var s = self
        while let last = s.last, last == "\n" || last == "\r" { s.removeLast() }
        return s
    }
}
