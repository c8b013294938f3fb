import BLEBytes

/// The values of GATT's include and characteristic declarations (Core v5.4 Vol 3 Part G 3.2 and
/// 3.3.1): read by the analysis from discovery responses (Read By Type of 0x2802/0x2803), written by
/// the device twin into its attribute table. One layout, both directions; `GATTValues` displays
/// the same values field by field.
public enum GATTDeclaration {
    /// Characteristic declaration value (Part G 3.3.1, Table 3.3): Characteristic Properties (1),
    /// Characteristic Value Attribute Handle (2), Characteristic UUID (2 or 16).
    public struct Characteristic: Equatable, Sendable {
        public var properties: UInt8
        public var valueHandle: UInt16
        public var uuid: BluetoothUUID

        public init(properties: UInt8, valueHandle: UInt16, uuid: BluetoothUUID) {
            self.properties = properties
            self.valueHandle = valueHandle
            self.uuid = uuid
        }

        /// Reads the whole value: the UUID is what follows the handle (2 or 16 bytes, else `.invalidValue`).
        public static func read(_ r: inout ByteReader) throws(DecodeError) -> Characteristic {
            let properties = try r.u8("Properties")
            let valueHandle = try r.u16le("Value Handle")
            return Characteristic(properties: properties, valueHandle: valueHandle, uuid: try r.uuid(width: r.remaining))
        }

        public var bytes: [UInt8] {
            var w = ByteWriter()
            w.u8(properties)
            w.u16le(valueHandle)
            w.append(ATTEncoding.uuidBytes(uuid))
            return w.bytes
        }
    }

    /// Include declaration value (Part G 3.2, Table 3.2): Included Service Attribute Handle (2),
    /// End Group Handle (2), then the Service UUID only when it is a 16-bit UUID.
    public struct Include: Equatable, Sendable {
        public var range: ATT.HandleRange
        public var uuid: BluetoothUUID?

        public init(range: ATT.HandleRange, uuid: BluetoothUUID?) {
            self.range = range
            self.uuid = uuid
        }

        public static func read(_ r: inout ByteReader) throws(DecodeError) -> Include {
            let start = try r.u16le("Start")
            let end = try r.u16le("End")
            let uuid = r.remaining == 2 ? try r.uuid(width: 2) : nil
            return Include(range: ATT.HandleRange(start: start, end: end), uuid: uuid)
        }

        public var bytes: [UInt8] {
            var w = ByteWriter()
            w.u16le(range.start)
            w.u16le(range.end)
            if let short = uuid?.uuid16 { w.u16le(short) }
            return w.bytes
        }
    }
}
