import BLEBytes

/// What the session knows about the ATT bearer when a PDU is displayed (Wireshark keeps the same
/// per-frame handle → UUID map, STYLE 6.5.9). All of it is optional: `.none` decodes without context.
public struct ATTDisplayContext: Sendable {
    /// A description of the attribute at a handle, without the handle: `Heart Rate Measurement (0x2A37)`.
    /// The display appends `@0x000C`. When nil, `valueUUID` is used to describe it.
    public var describeHandle: @Sendable (UInt16) -> String?
    /// The characteristic or descriptor UUID whose value lives at a handle, to decode values
    /// (notifications, writes, reads) with `GATTValues`.
    public var valueUUID: @Sendable (UInt16) -> BluetoothUUID?
    /// For a Read Response / Read Blob Response: the handle of the request it answers, when the
    /// session paired them. Lets the value be named and decoded.
    public var requestHandle: UInt16?
    /// For a Read By Type / Read By Group Type Response: the Attribute Type of the request it
    /// answers. Without it, element values of 7 or 21 bytes whose value handle follows the
    /// declaration are shown as characteristic declarations, and group values as service UUIDs.
    public var requestedType: BluetoothUUID?

    public init(describeHandle: @escaping @Sendable (UInt16) -> String? = { _ in nil },
                valueUUID: @escaping @Sendable (UInt16) -> BluetoothUUID? = { _ in nil },
                requestHandle: UInt16? = nil, requestedType: BluetoothUUID? = nil) {
        self.describeHandle = describeHandle
        self.valueUUID = valueUUID
        self.requestHandle = requestHandle
        self.requestedType = requestedType
    }

    /// No knowledge of the attribute database.
    public static let none = ATTDisplayContext()

    /// `Heart Rate Measurement (0x2A37) @0x000C`, when the handle is known.
    public func attribute(_ handle: UInt16) -> String? {
        guard let d = describeHandle(handle) ?? valueUUID(handle)?.displayName else { return nil }
        return "\(d) @0x\(Hex.pad(handle, 4).uppercased())"
    }
}

/// Decodes one ATT PDU for display (Core v5.4 Vol 3 Part F 3.4). Never throws: a malformed PDU is a
/// layer with an `error` and the fields read before it; an unknown opcode is a layer named
/// "Unknown" with its raw bytes.
public enum ATTDisplay {
    /// - Parameter r: the ATT PDU, from its opcode to the end of the L2CAP payload.
    public static func decode(_ r: inout ByteReader, context: ATTDisplayContext = .none) -> Layer {
        var layer = Layer(protocolName: "ATT", name: "Malformed", code: "", length: r.remaining)
        let op: UInt8
        do { op = try r.u8("Opcode") } catch {
            layer.error = error
            return layer
        }
        layer.code = "0x" + Hex.pad(op, 2)
        guard let entry = ATTDecoding.index[op] else {
            layer.name = "Unknown"
            if r.remaining > 0 { layer.fields.append(Field("Data", .bytes(Array(r.rest().bytes)))) }
            return layer
        }
        layer.name = entry.name.description
        do {
            try entry.size.check(r, entry.name)
        } catch {
            layer.error = error
            layer.notes.append(r.remaining == 0 ? "too short packet" : "invalid packet size")
            if r.remaining > 0 { layer.fields.append(Field("Data", .bytes(Array(r.rest().bytes)))) }
            return layer
        }
        var fields: [Field] = []
        do {
            try entry.display(&r, context, &fields)
        } catch {
            layer.error = error
        }
        layer.fields = fields
        if layer.error == nil, r.remaining > 0 {
            layer.notes.append("\(r.remaining) trailing byte\(r.remaining == 1 ? "" : "s"): \(Hex.string(r.remainingBytes))")
        }
        return layer
    }
}

/// Display helpers shared by the ATT rows.
enum ATTShow {
    /// A row displayed straight from field specs (no context needed).
    static func params(_ p: [Param]) -> ATTEntry.Display {
        { r, _, f throws(DecodeError) in try FieldDecoder.decode(p, &r, into: &f) }
    }

    /// Reads a handle, shows it in hex and, when the session knows it, what it is.
    @discardableResult
    static func handle(_ r: inout ByteReader, _ ctx: ATTDisplayContext, _ f: inout [Field],
                       _ name: StaticString = "Handle") throws(DecodeError) -> UInt16 {
        let h = try r.u16le(name)
        f.append(Field(name, .integer(UInt64(h), .hex(bytes: 2))))
        if let d = ctx.attribute(h) { f.append(Field("Attribute", .text(d))) }
        return h
    }

    /// Starting Handle, Ending Handle.
    static func handleRange(_ r: inout ByteReader, _ f: inout [Field]) throws(DecodeError) {
        f.append(Field("Start Handle", .integer(UInt64(try r.u16le("Starting Handle")), .hex(bytes: 2))))
        f.append(Field("End Handle", .integer(UInt64(try r.u16le("Ending Handle")), .hex(bytes: 2))))
    }

    /// A UUID with its SIG name: `Heart Rate (0x180D)`.
    static func uuid(_ u: BluetoothUUID) -> FieldValue { .text(u.displayName) }

    /// Shows `s` as the value of an attribute of type `uuid`: raw bytes, then the decoded fields when
    /// `GATTValues` knows the type.
    static func value(_ s: ByteReader, uuid: BluetoothUUID?, _ f: inout [Field], _ name: StaticString = "Value") {
        f.append(Field(name, .bytes(Array(s.remainingBytes))))
        guard let uuid, s.remaining > 0 else { return }
        var v = s
        if let decoded = GATTValues.decode(uuid: uuid, &v), !decoded.isEmpty {
            f.append(Field("Decoded", .group(decoded)))
        }
    }

    /// The rest of the PDU as the value of the attribute at `handle`.
    static func restValue(_ r: inout ByteReader, handle: UInt16?, _ ctx: ATTDisplayContext, _ f: inout [Field],
                          _ name: StaticString = "Value") {
        value(r.rest(), uuid: handle.flatMap(ctx.valueUUID), &f, name)
    }
}
