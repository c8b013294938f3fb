import BLEProtocol

/// The Device Information Service strings a log shows: values of DIS characteristics read with
/// ATT Read Request and answered whole (GATT Specification Supplement 3.x: Manufacturer Name String
/// 0x2A29, Model Number String 0x2A24, Firmware Revision String 0x2A26, Software Revision String
/// 0x2A28, Hardware Revision String 0x2A27; all UTF-8). A value counts only when discovery in the
/// same log named its handle's characteristic. The Serial Number String (0x2A25) is left out on
/// purpose: it names one unit, which a fleet summary does not need and a shared table should not hold.
public struct DeviceInformation: Sendable, Equatable {
    public var manufacturer: String?
    public var model: String?
    public var firmware: String?
    public var software: String?
    public var hardware: String?

    /// Characteristic UUID → field, in the order above.
    static let characteristics: [(uuid: BluetoothUUID, field: Field)] = [
        (BluetoothUUID(uuid16: 0x2A29), .manufacturer), (BluetoothUUID(uuid16: 0x2A24), .model),
        (BluetoothUUID(uuid16: 0x2A26), .firmware), (BluetoothUUID(uuid16: 0x2A28), .software),
        (BluetoothUUID(uuid16: 0x2A27), .hardware),
    ]
    enum Field: Sendable { case manufacturer, model, firmware, software, hardware }

    public init() {}

    /// The strings read from `database` (the peer's GATT server).
    public init(_ database: GATTDatabase) {
        for c in database.characteristics.values.sorted(by: { $0.declarationHandle < $1.declarationHandle }) {
            guard let field = Self.characteristics.first(where: { $0.uuid == c.uuid })?.field,
                  let bytes = database.values[c.valueHandle], let text = Self.text(bytes) else { continue }
            switch field {
            case .manufacturer: manufacturer = manufacturer ?? text
            case .model: model = model ?? text
            case .firmware: firmware = firmware ?? text
            case .software: software = software ?? text
            case .hardware: hardware = hardware ?? text
            }
        }
    }

    public var isEmpty: Bool { self == DeviceInformation() }

    /// A utf8s value as text: padding (NULs of C strings, 0xFF of erased flash, spaces) dropped; nil when empty.
    static func text(_ bytes: [UInt8]) -> String? { Advertisers.displayName(bytes) }
}
