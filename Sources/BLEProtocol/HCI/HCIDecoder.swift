import BLEBytes

/// HCI packet types as carried by H4 (Core v5.4 Vol 4 Part A 2).
public enum HCIPacketType: UInt8, Sendable {
    case command = 1, acl = 2, sco = 3, event = 4, iso = 5
}

/// Decodes one HCI packet for display: header checks once (like btmon's dispatcher), then the
/// parameters through the decoding tables. Never throws: a malformed packet is a layer with an
/// `error` and the fields read before it.
public enum HCIDecoder {
    public static let commands = MessageTable(
        LinkControlCommands.rows + LinkPolicyCommands.rows + ControllerBasebandCommands.rows + InformationalCommands.rows
            + StatusCommands.rows + LEControllerCommands.rows + LEAdvertisingCommands.rows + LEIsochronousCommands.rows
            + LEConnectionCommands.rows)
    public static let events = MessageTable(EventTable.rows)
    public static let leMeta = MessageTable(LEMetaTable.rows)

    /// The Core spec assigns this event code (Vol 4 Part E 7.7): it has a decoder (a table row,
    /// or Command Complete / Status, LE Meta, Vendor). Other codes are a controller's own.
    public static func isAssignedEvent(_ code: UInt8) -> Bool {
        [HCIEventCode.commandComplete, HCIEventCode.commandStatus, HCIEventCode.leMeta, HCIEventCode.vendor].contains(code)
            || events[UInt16(code)] != nil
    }
    /// Names of the LE subevents, for the `Subevent` field.
    static let leMetaNames = NameTable(LEMetaTable.rows.map { (UInt64($0.code), $0.name) })

    /// Command names for Command Complete/Status opcodes: `LE Set Scan Enable`, vendor, unknown.
    public static let opcodeNames = NameTable([], fallback: { commandName(HCIOpcode(rawValue: UInt16(truncatingIfNeeded: $0))) })

    public static func commandName(_ opcode: HCIOpcode) -> String {
        if let e = commands[opcode.rawValue] { return e.name.description }
        if opcode.rawValue == 0 { return "NOP" }
        return opcode.isVendor ? "Vendor 0x\(Hex.pad(opcode.rawValue, 4, uppercase: true))" : "Unknown"
    }

    /// The name of a command of a controller by `vendor` (its vendor commands by name).
    public static func commandName(_ opcode: HCIOpcode, vendor: HCIVendor?) -> String {
        if let vendor, let name = vendor.name(opcode) { return name.description }
        return commandName(opcode)
    }

    /// `0x08|0x000b`: OGF and OCF as btmon shows them.
    public static func opcodeCode(_ opcode: HCIOpcode) -> String {
        "0x\(Hex.pad(opcode.ogf, 2))|0x\(Hex.pad(opcode.ocf, 4))"
    }

    /// - Parameters:
    ///   - originalLength: the packet's length on the wire; larger than the bytes when the capture cut it.
    ///   - vendor: the controller's maker, when known: its vendor commands are named.
    public static func decode(_ type: HCIPacketType, _ r: inout ByteReader, originalLength: Int? = nil,
                              vendor: HCIVendor? = nil) -> Layer {
        let captureTruncated = (originalLength ?? r.remaining) > r.remaining
        var layer: Layer
        switch type {
        case .command: layer = command(&r, captureTruncated: captureTruncated, vendor: vendor)
        case .event: layer = event(&r, captureTruncated: captureTruncated, vendor: vendor)
        case .acl: layer = acl(&r, captureTruncated: captureTruncated)
        case .sco: layer = sco(&r)
        case .iso: layer = iso(&r)
        }
        // Fields cut by the capture are not a protocol error: keep what was decoded, note the cut.
        // (A packet cut inside its header stays an error: nothing of it could be decoded.)
        if captureTruncated, layer.length != nil, let e = layer.error, case .truncated = e.kind {
            layer.notes.append("decoding stopped where the capture cut the packet (\(e.field))")
            layer.error = nil
        }
        return layer
    }

    /// Checks a declared parameter length against the bytes present and returns the parameter reader.
    /// A shortfall caused by the capture (snap length) is a note; otherwise it is malformed.
    static func parameters(_ r: inout ByteReader, declared: Int, captureTruncated: Bool, layer: inout Layer) -> ByteReader? {
        if declared > r.remaining {
            if captureTruncated {
                layer.notes.append("capture kept \(r.remaining) of \(declared) parameter bytes")
            } else {
                layer.error = DecodeError(kind: .lengthMismatch(declared: declared, actual: r.remaining),
                                          offset: r.absoluteOffset, field: "Parameter Total Length")
            }
            return r.rest()
        }
        guard let p = try? r.slice(declared, "Parameters") else { return nil }
        if r.remaining > 0 {
            layer.notes.append("\(r.remaining) byte\(r.remaining == 1 ? "" : "s") after the packet: \(Hex.string(r.remainingBytes))")
        }
        return p
    }

    static func apply(_ params: [Param], _ p: inout ByteReader, to layer: inout Layer) {
        let (fields, error, notes) = FieldDecoder.decodeMessage(params, &p)
        layer.fields += fields
        if layer.error == nil { layer.error = error }
        layer.notes += notes
    }

    static func command(_ r: inout ByteReader, captureTruncated: Bool, vendor: HCIVendor? = nil) -> Layer {
        var layer = Layer(protocolName: "HCI Command", name: "Malformed", code: "")
        guard let raw = try? r.u16le("Opcode"), let plen = try? r.u8("Parameter Total Length") else {
            layer.error = DecodeError(kind: .truncated(needed: 3, available: r.remaining), offset: r.absoluteOffset, field: "HCI Command header")
            return layer
        }
        let opcode = HCIOpcode(rawValue: raw)
        layer.name = commandName(opcode, vendor: vendor)
        layer.code = opcodeCode(opcode)
        layer.length = Int(plen)
        guard var p = parameters(&r, declared: Int(plen), captureTruncated: captureTruncated, layer: &layer) else { return layer }
        if let entry = commands[raw] {
            apply(entry.parameters, &p, to: &layer)
        } else if p.remaining > 0 {
            layer.fields.append(Field("Parameters", .bytes(Array(p.rest().bytes))))
        }
        return layer
    }

    static func event(_ r: inout ByteReader, captureTruncated: Bool, vendor: HCIVendor? = nil) -> Layer {
        var layer = Layer(protocolName: "HCI Event", name: "Malformed", code: "")
        guard let code = try? r.u8("Event Code"), let plen = try? r.u8("Parameter Total Length") else {
            layer.error = DecodeError(kind: .truncated(needed: 2, available: r.remaining), offset: r.absoluteOffset, field: "HCI Event header")
            return layer
        }
        layer.code = Hex.code(code, 2)
        layer.length = Int(plen)
        guard var p = parameters(&r, declared: Int(plen), captureTruncated: captureTruncated, layer: &layer) else { return layer }
        switch code {
        case HCIEventCode.commandComplete:
            layer.name = "Command Complete"
            commandComplete(&p, into: &layer, names: vendor?.opcodeNames ?? opcodeNames)
        case HCIEventCode.commandStatus:
            layer.name = "Command Status"
            apply([Param("Status", .status), Param(.numCommandPackets, "Num HCI Command Packets", .uint(1)),
                   Param(.commandOpcode, "Opcode", .named(2, vendor?.opcodeNames ?? opcodeNames))], &p, to: &layer)
        case HCIEventCode.leMeta:
            layer.name = "LE Meta Event"
            guard let sub = try? p.u8("Subevent Code") else {
                layer.error = DecodeError(kind: .truncated(needed: 1, available: 0), offset: p.absoluteOffset, field: "Subevent Code")
                return layer
            }
            if let entry = leMeta[UInt16(sub)] {
                layer.fields.append(Field(.subevent, "Subevent", .integer(UInt64(sub), .named(bytes: 1, leMetaNames))))
                apply(entry.parameters, &p, to: &layer)
            } else {
                layer.fields.append(Field(.subevent, "Subevent", .integer(UInt64(sub), .hex(bytes: 1))))
                layer.fields.append(Field("Parameters", .bytes(Array(p.rest().bytes))))
            }
        case HCIEventCode.vendor where QualityReport.row(p) != nil:
            // Android's Bluetooth Quality Report (`QualityReport`): laid out by its row.
            let row = QualityReport.row(p) ?? []
            layer.name = "Vendor: Android Bluetooth Quality Report"
            _ = try? p.u8("Sub-event")
            layer.fields.append(Field(.subevent, "Sub-event", .integer(UInt64(QualityReport.subevent), .hex(bytes: 1))))
            apply(row, &p, to: &layer)
        default:
            if let entry = events[UInt16(code)] {
                layer.name = entry.nameText
                apply(entry.parameters, &p, to: &layer)
            } else {
                layer.name = "Unknown"
                layer.fields.append(Field("Parameters", .bytes(Array(p.rest().bytes))))
            }
        }
        return layer
    }

    /// Command Complete: its return parameters are decoded by the row of the command it completes.
    static func commandComplete(_ p: inout ByteReader, into layer: inout Layer, names: NameTable = opcodeNames) {
        // The header fields only: what follows are the return parameters, not trailing bytes.
        let (header, headerError) = FieldDecoder.decodeAll([Param(.numCommandPackets, "Num HCI Command Packets", .uint(1)),
                                                            Param(.commandOpcode, "Opcode", .named(2, names))], &p)
        layer.fields += header
        if layer.error == nil { layer.error = headerError }
        guard layer.error == nil, layer.fields.count == 2, case let .integer(op, _) = layer.fields[1].value else { return }
        if let returns = commands[UInt16(op)]?.returns {
            // Controllers often return only the Status when a command fails (or is unknown to them);
            // btmon accepts a one-byte return for any command, and so do we.
            if p.remaining == 1, returns.count > 1 {
                apply([Param("Status", .status)], &p, to: &layer)
                if case .integer(0, _)? = layer.fields.last?.value { layer.notes.append("only the Status return parameter present") }
                return
            }
            apply(returns, &p, to: &layer)
        } else if p.remaining > 0 {
            // Unknown or vendor command: the status byte is still defined for every command; the
            // rest is shown raw (not also as a trailing-bytes note).
            let (fields, error) = FieldDecoder.decodeAll([Param("Status", .status)], &p)
            layer.fields += fields
            if layer.error == nil { layer.error = error }
            if p.remaining > 0 { layer.fields.append(Field("Return Parameters", .bytes(Array(p.rest().bytes)))) }
        }
    }

    /// ACL header, Core v5.4 Vol 4 Part E 5.4.2: handle (12 bits), PB flag (2), BC flag (2), length.
    static func acl(_ r: inout ByteReader, captureTruncated: Bool) -> Layer {
        var layer = Layer(protocolName: "ACL Data", name: "", code: "")
        guard let word = try? r.u16le("Handle"), let dlen = try? r.u16le("Data Total Length") else {
            layer.error = DecodeError(kind: .truncated(needed: 4, available: r.remaining), offset: r.absoluteOffset, field: "ACL header")
            return layer
        }
        let header = ACLHeader(word: word, length: dlen)
        layer.length = Int(dlen)
        // Qualcomm controllers log on the reserved handle 0x0EDC (QCA_DEBUG_HANDLE in Linux's hci_qca.c): named, not a link.
        let handleFormat: FieldFormat = header.handle == ACLHeader.qualcommDebugHandle
            ? .named(bytes: 2, ACLHeader.reservedHandleNames) : .decimal(bytes: 2)
        layer.fields = [
            Field(.connectionHandle, "Handle", .integer(UInt64(header.handle), handleFormat)),
            Field(.packetBoundary, "Packet Boundary", .integer(UInt64(header.packetBoundary), .named(bytes: 1, ACLHeader.boundaryNames))),
            Field("Broadcast", .integer(UInt64(header.broadcast), .hex(bytes: 1))),
        ]
        _ = parameters(&r, declared: Int(dlen), captureTruncated: captureTruncated, layer: &layer)
        return layer
    }

    static func sco(_ r: inout ByteReader) -> Layer {
        var layer = Layer(protocolName: "SCO Data", name: "", code: "")
        do {
            let word = try r.u16le("Handle")
            let len = try r.u8("Data Total Length")
            layer.length = Int(len)
            layer.fields = [Field(.connectionHandle, "Handle", .integer(UInt64(word & 0x0FFF), .decimal(bytes: 2)))]
        } catch { layer.error = error }
        return layer
    }

    static func iso(_ r: inout ByteReader) -> Layer {
        var layer = Layer(protocolName: "ISO Data", name: "", code: "")
        do {
            let word = try r.u16le("Handle")
            let len = try r.u16le("Data Total Length")
            layer.length = Int(len & 0x3FFF)
            layer.fields = [Field(.connectionHandle, "Handle", .integer(UInt64(word & 0x0FFF), .decimal(bytes: 2))),
                            Field("Flags", .integer(UInt64(word >> 12), .hex(bytes: 1)))]
        } catch { layer.error = error }
        return layer
    }
}

/// The 4-byte ACL data packet header, Core v5.4 Vol 4 Part E 5.4.2.
public struct ACLHeader: Sendable, Equatable {
    /// Connection handle, 12 bits.
    public let handle: UInt16
    /// Packet_Boundary_Flag: 0b00 first non-flushable, 0b01 continuing fragment, 0b10 first
    /// automatically flushable, 0b11 complete L2CAP PDU (deprecated; LE hosts see 0b00/0b10 starts).
    public let packetBoundary: UInt8
    /// Broadcast_Flag, 2 bits.
    public let broadcast: UInt8
    /// Data_Total_Length.
    public let length: UInt16

    @inlinable
    public init(word: UInt16, length: UInt16) {
        handle = word & 0x0FFF
        packetBoundary = UInt8((word >> 12) & 0x3)
        broadcast = UInt8(word >> 14)
        self.length = length
    }

    /// True when this fragment starts an L2CAP PDU.
    public var isStart: Bool { packetBoundary != 0b01 }

    /// Packet_Boundary_Flag values (Core v5.4 Vol 4 Part E 5.4.2).
    public static let firstNonFlushable: UInt8 = 0b00
    public static let continuing: UInt8 = 0b01
    public static let firstFlushable: UInt8 = 0b10
    /// Bytes of the header: handle word and Data_Total_Length.
    public static let size = 4

    /// Connection handles are 0x0000–0x0EFF (Core v5.4 Vol 4 Part E 5.4.2); Qualcomm controllers send
    /// their debug log on 0x0EDC (header word 0x2EDC, `QCA_DEBUG_HANDLE` in Linux's hci_qca.c).
    public static let qualcommDebugHandle: UInt16 = 0x0EDC
    public static let reservedHandleNames = NameTable([(0x0EDC, "Qualcomm debug log, not a connection")])

    public static let boundaryNames = NameTable([
        (0, "First non-flushable"), (1, "Continuing fragment"), (2, "First automatically flushable"), (3, "Complete L2CAP PDU"),
    ])
}
