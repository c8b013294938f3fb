import BLEBytes

/// What the session knows about the attributes of one GATT server, for display. Implemented by
/// the session's rebuilt database, which caches the text per handle.
public protocol ATTAttributeSource: AnyObject, Sendable {
    /// `Heart Rate Measurement (0x2A37) @0x000C`, when the handle is known.
    func attributeText(_ handle: UInt16) -> String?
    /// The characteristic or descriptor UUID whose value lives at a handle, to decode values
    /// (notifications, writes, reads) with `GATTValues`.
    func valueUUID(_ handle: UInt16) -> BluetoothUUID?
}

/// What the session knows about the ATT bearer when a PDU is displayed (Wireshark keeps the same
/// per-frame handle → UUID map, STYLE 6.5.9). Made per PDU by the packet list, so it holds one
/// reference to the attribute source rather than closures (no allocation per PDU).
public struct ATTDisplayContext: Sendable {
    /// Names and types of handles; nil: no knowledge of the attribute database.
    public var attributes: (any ATTAttributeSource)?
    /// For a Read Response / Read Blob Response: the handle of the request it answers, when the
    /// session paired them. Lets the value be named and decoded.
    public var requestHandle: UInt16?
    /// For a Read By Type / Read By Group Type Response: the Attribute Type of the request it
    /// answers. Without it, element values of 7 or 21 bytes whose value handle follows the
    /// declaration are shown as characteristic declarations, and group values as service UUIDs.
    public var requestedType: BluetoothUUID?

    public init(attributes: (any ATTAttributeSource)?, requestHandle: UInt16? = nil, requestedType: BluetoothUUID? = nil) {
        self.attributes = attributes
        self.requestHandle = requestHandle
        self.requestedType = requestedType
    }

    /// A context from functions (tests, fuzzing): `describeHandle` names a handle without the
    /// handle (`Heart Rate Measurement (0x2A37)`); when it gives nil, the `valueUUID` name is used.
    public init(describeHandle: @escaping @Sendable (UInt16) -> String? = { _ in nil },
                valueUUID: @escaping @Sendable (UInt16) -> BluetoothUUID? = { _ in nil },
                requestHandle: UInt16? = nil, requestedType: BluetoothUUID? = nil) {
        self.init(attributes: FunctionAttributes(describe: describeHandle, uuid: valueUUID),
                  requestHandle: requestHandle, requestedType: requestedType)
    }

    /// No knowledge of the attribute database.
    public static let none = ATTDisplayContext(attributes: nil)

    /// `Heart Rate Measurement (0x2A37) @0x000C`, when the handle is known.
    public func attribute(_ handle: UInt16) -> String? { attributes?.attributeText(handle) }

    /// The UUID of the characteristic or descriptor whose value lives at `handle`.
    public func valueUUID(_ handle: UInt16) -> BluetoothUUID? { attributes?.valueUUID(handle) }

    /// The text `attributeText` gives: what the attribute is, then its handle in upper-case hex.
    public static func attributeText(_ description: String, handle: UInt16) -> String {
        description + " @0x" + Hex.pad(handle, 4, uppercase: true)
    }
}

/// An attribute source made of two functions.
private final class FunctionAttributes: ATTAttributeSource {
    let describe: @Sendable (UInt16) -> String?
    let uuid: @Sendable (UInt16) -> BluetoothUUID?

    init(describe: @escaping @Sendable (UInt16) -> String?, uuid: @escaping @Sendable (UInt16) -> BluetoothUUID?) {
        (self.describe, self.uuid) = (describe, uuid)
    }

    func attributeText(_ handle: UInt16) -> String? {
        guard let d = describe(handle) ?? uuid(handle)?.displayName else { return nil }
        return ATTDisplayContext.attributeText(d, handle: handle)
    }

    func valueUUID(_ handle: UInt16) -> BluetoothUUID? { uuid(handle) }
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
        layer.code = Hex.code(op, 2)
        guard let entry = ATTDecoding.index[op] else {
            layer.name = "Unknown"
            if r.remaining > 0 { layer.fields.append(Field(.rest, "Data", .bytes(Array(r.rest().bytes)))) }
            return layer
        }
        layer.name = entry.nameText
        do {
            try entry.size.check(r, entry.name)
        } catch {
            layer.error = error
            layer.notes.append(r.remaining == 0 ? "too short packet" : "invalid packet size")
            if r.remaining > 0 { layer.fields.append(Field(.rest, "Data", .bytes(Array(r.rest().bytes)))) }
            return layer
        }
        var fields: [Field] = []
        fields.reserveCapacity(4)
        do {
            try ATTParam.show(entry.params, tails: entry.tails, &r, context, &fields)
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
    /// Reads a handle, shows it in hex and, when the session knows it, what it is.
    @discardableResult
    static func handle(_ r: inout ByteReader, _ ctx: ATTDisplayContext, _ f: inout [Field],
                       _ name: StaticString = "Handle") throws(DecodeError) -> UInt16 {
        let h = try r.u16le(name)
        f.append(Field(name, .integer(UInt64(h), .hex(bytes: 2))))
        if let d = ctx.attribute(h) { f.append(Field("Attribute", .text(d))) }
        return h
    }

    /// A UUID with its SIG name: `Heart Rate (0x180D)`.
    static func uuid(_ u: BluetoothUUID) -> FieldValue { .text(u.displayName) }

    /// Shows `s` as the value of an attribute of type `uuid`: raw bytes, then the decoded fields when
    /// `GATTValues` knows the type.
    static func value(_ s: ByteReader, uuid: BluetoothUUID?, _ f: inout [Field], _ name: StaticString = "Value") {
        f.append(Field(.attValue, name, .bytes(Array(s.remainingBytes))))
        guard let uuid, s.remaining > 0 else { return }
        var v = s
        if let decoded = GATTValues.decode(uuid: uuid, &v), !decoded.isEmpty {
            f.append(Field(.attValue, "Decoded", .group(decoded)))
        }
    }
}
