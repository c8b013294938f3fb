import BLEBytes

/// Decodes a complete L2CAP PDU for display: the L2CAP layer (basic header), then the layer of its
/// channel (ATT, SMP, signalling commands). Never throws: problems are layer `error`s and notes.
public enum L2CAPDisplay {
    /// - Parameters:
    ///   - pdu: a complete, reassembled L2CAP PDU, starting at the 4-byte basic header.
    ///   - context: what the session knows about the ATT bearer (handles → names and types).
    ///   - isFirstKFrame: for a dynamic (credit-based) channel, whether this PDU starts an SDU, when
    ///     the session knows; nil shows the payload raw.
    /// - Returns: the L2CAP layer, then one layer for ATT/SMP, or one per signalling command.
    public static func decode(pdu r: inout ByteReader, context: ATTDisplayContext = .none, isFirstKFrame: Bool? = nil) -> [Layer] {
        var layers: [Layer] = []
        decode(pdu: &r, context: context, isFirstKFrame: isFirstKFrame, into: &layers)
        return layers
    }

    /// `decode(pdu:context:isFirstKFrame:)` appending to `layers` (the packet list builds each
    /// frame's layers in one array).
    public static func decode(pdu r: inout ByteReader, context: ATTDisplayContext = .none, isFirstKFrame: Bool? = nil,
                              into layers: inout [Layer]) {
        var l2 = Layer(protocolName: "L2CAP", name: "Malformed", code: "")
        let header: L2CAP.BasicHeader
        do { header = try L2CAP.BasicHeader.read(&r) } catch {
            l2.error = error
            if r.remaining > 0 { l2.fields.append(Field("Data", .bytes(Array(r.rest().bytes)))) }
            layers.append(l2)
            return
        }
        l2.name = header.channel.name
        l2.code = Hex.code(header.channel.rawValue, 4)
        l2.length = Int(header.length)
        l2.fields = [Field(.l2capLength, "Length", .integer(UInt64(header.length), .decimal(bytes: 2))),
                     Field("CID", .integer(UInt64(header.channel.rawValue), .named(bytes: 2, L2CAP.ChannelID.names)))]
        var payload: ByteReader
        let declared = Int(header.length)
        if declared > r.remaining {
            l2.error = DecodeError(kind: .lengthMismatch(declared: declared, actual: r.remaining),
                                   offset: r.absoluteOffset &- 4, field: "Length")   // safe: header just read
            payload = r.rest()
        } else {
            payload = (try? r.slice(declared, "Information Payload")) ?? r.rest()
            if r.remaining > 0 {
                l2.notes.append("\(r.remaining) byte\(r.remaining == 1 ? "" : "s") after the L2CAP PDU: \(Hex.string(r.remainingBytes))")
            }
        }
        switch header.channel {
        case .att:
            layers.append(l2)
            layers.append(ATTDisplay.decode(&payload, context: context))
        case .smp:
            layers.append(l2)
            layers.append(SMPDisplay.decode(&payload))
        case .brEdrSMP:
            layers.append(l2)
            layers.append(SMPDisplay.decode(&payload, protocolName: "BR/EDR SMP"))
        case .leSignaling:
            let command = signaling(&payload, protocolName: "LE L2CAP")
            if payload.remaining > 0 {
                // Core v5.4 Vol 3 Part A 4: one command per C-frame on the LE signalling channel.
                l2.notes.append("\(payload.remaining) byte\(payload.remaining == 1 ? "" : "s") after the LE signalling command: \(Hex.string(payload.remainingBytes))")
            }
            layers.append(l2)
            layers.append(command)
        case .signaling:
            layers.append(l2)
            repeat {
                layers.append(signaling(&payload, protocolName: "L2CAP"))
            } while payload.remaining > 0 && layers[layers.count &- 1].error == nil   // safe: non-empty
        case .connectionless:
            do {
                l2.fields.append(Field("PSM", .integer(UInt64(try payload.u16le("PSM")), .hex(bytes: 2))))
            } catch {
                if l2.error == nil { l2.error = error }
            }
            l2.fields.append(Field("Payload", .bytes(Array(payload.rest().bytes))))
            layers.append(l2)
        default:
            if header.channel.isDynamic, let first = isFirstKFrame {
                l2.fields += kFrame(&payload, isFirstKFrame: first)
            } else {
                l2.fields.append(Field("Payload", .bytes(Array(payload.rest().bytes))))
            }
            layers.append(l2)
        }
    }

    /// Fields of a K-frame payload (after the basic header), Core v5.4 Vol 3 Part A 3.4: the SDU
    /// Length when it is the first K-frame of an SDU, then the payload. A first K-frame too short for
    /// the SDU Length gives a `Malformed` note and the raw bytes.
    public static func kFrame(_ r: inout ByteReader, isFirstKFrame: Bool) -> [Field] {
        var fields: [Field] = []
        if isFirstKFrame {
            do {
                fields.append(Field("SDU Length", .integer(UInt64(try r.u16le("L2CAP SDU Length")), .decimal(bytes: 2))))
            } catch {
                fields.append(Field("Malformed", .problem(error)))
            }
        }
        fields.append(Field("Payload", .bytes(Array(r.rest().bytes))))
        return fields
    }

    /// One signalling command as a layer: `LE L2CAP: Connection Parameter Update Request (0x12)`,
    /// Identifier first, then the command's fields.
    static func signaling(_ r: inout ByteReader, protocolName: StaticString) -> Layer {
        var layer = Layer(protocolName: protocolName, name: "Malformed", code: "")
        let code: UInt8, identifier: UInt8, length: UInt16
        do {
            code = try r.u8("Code")
            identifier = try r.u8("Identifier")
            length = try r.u16le("Length")
        } catch {
            layer.error = error
            if r.remaining > 0 { layer.fields.append(Field("Data", .bytes(Array(r.rest().bytes)))) }
            return layer
        }
        layer.code = Hex.code(code, 2)
        layer.length = Int(length)
        layer.fields.append(Field("Identifier", .integer(UInt64(identifier), .decimal(bytes: 1))))
        var data: ByteReader
        if Int(length) > r.remaining {
            layer.error = DecodeError(kind: .lengthMismatch(declared: Int(length), actual: r.remaining),
                                      offset: r.absoluteOffset &- 2, field: "Length")   // safe: Length just read
            data = r.rest()
        } else {
            data = (try? r.slice(Int(length), "Data")) ?? r.rest()
        }
        guard let entry = L2CAPSignalingTable.index[code] else {
            layer.name = "Unknown"
            if data.remaining > 0 { layer.fields.append(Field("Data", .bytes(Array(data.rest().bytes)))) }
            return layer
        }
        layer.name = entry.name.description
        do {
            try entry.size.check(data, entry.name)
            try entry.display(&data, &layer.fields)
        } catch {
            if layer.error == nil { layer.error = error }
            if data.remaining > 0 { layer.fields.append(Field("Data", .bytes(Array(data.rest().bytes)))) }
            return layer
        }
        if data.remaining > 0 {
            layer.notes.append("\(data.remaining) trailing byte\(data.remaining == 1 ? "" : "s"): \(Hex.string(data.remainingBytes))")
        }
        return layer
    }
}
