import BLEBytes

/// Advertising and scan response data, EIR data: AD structures (Core v5.4 Vol 3 Part C 11,
/// Core Specification Supplement v11 Part A, Assigned Numbers 2.3).
public enum AD {
    /// Significant bytes of legacy advertising or scan response data, Core v5.4 Vol 6 Part B 2.3.1.
    public static let legacyMaxLength = 31
    /// Significant bytes of Extended Inquiry Response data, Core v5.4 Vol 3 Part C 8.
    public static let eirMaxLength = 240

    /// Iterates the AD structures of advertising data: `Length` (type + data), `AD Type`, data.
    /// Stops at a zero Length (early termination / padding) or at a structure whose Length runs
    /// past the data; `problem` then says why and `rest` holds the bytes not decoded.
    public struct StructureIterator: IteratorProtocol {
        var r: ByteReader
        /// Why iteration stopped early, for a structure running past the data.
        public private(set) var problem: String?
        /// Bytes up to the end of the last complete structure: the significant part.
        public private(set) var significantLength = 0

        public init(_ r: ByteReader) { self.r = r }

        /// The undecoded bytes after a `problem`, or the padding after a zero Length.
        public var rest: ByteReader { r }

        public mutating func next() -> Structure? {
            guard let length = r.peekU8(), length > 0 else { return nil }
            guard Int(length) < r.remaining else {   // the Length byte itself plus `length` bytes
                problem = "AD structure length \(length) runs past the data (\(r.remaining &- 1) left)"   // safe: remaining >= 1
                return nil
            }
            _ = try? r.u8("Length")
            guard let type = try? r.u8("AD Type"), let data = try? r.slice(Int(length) &- 1, "AD Data") else { return nil }   // safe: length > 0
            significantLength = r.position
            return Structure(type: ADType(rawValue: type), data: data)
        }
    }

    /// One AD structure: its type and a reader over its data (no copy).
    public struct Structure {
        public let type: ADType
        public var data: ByteReader
    }
}

/// An AD type code, Assigned Numbers 2.3 (Common Data Types). Open: unknown types are values.
public struct ADType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let flags = ADType(0x01)
    public static let incompleteUUID16 = ADType(0x02)
    public static let completeUUID16 = ADType(0x03)
    public static let incompleteUUID32 = ADType(0x04)
    public static let completeUUID32 = ADType(0x05)
    public static let incompleteUUID128 = ADType(0x06)
    public static let completeUUID128 = ADType(0x07)
    public static let shortenedLocalName = ADType(0x08)
    public static let completeLocalName = ADType(0x09)
    public static let txPowerLevel = ADType(0x0A)
    public static let classOfDevice = ADType(0x0D)
    public static let simplePairingHashC192 = ADType(0x0E)
    public static let simplePairingRandomizerR192 = ADType(0x0F)
    public static let deviceIDOrTKValue = ADType(0x10)
    public static let securityManagerOOBFlags = ADType(0x11)
    public static let peripheralConnectionIntervalRange = ADType(0x12)
    public static let solicitationUUID16 = ADType(0x14)
    public static let solicitationUUID128 = ADType(0x15)
    public static let serviceData16 = ADType(0x16)
    public static let publicTargetAddress = ADType(0x17)
    public static let randomTargetAddress = ADType(0x18)
    public static let appearance = ADType(0x19)
    public static let advertisingInterval = ADType(0x1A)
    public static let leBluetoothDeviceAddress = ADType(0x1B)
    public static let leRole = ADType(0x1C)
    public static let simplePairingHashC256 = ADType(0x1D)
    public static let simplePairingRandomizerR256 = ADType(0x1E)
    public static let solicitationUUID32 = ADType(0x1F)
    public static let serviceData32 = ADType(0x20)
    public static let serviceData128 = ADType(0x21)
    public static let leSCConfirmationValue = ADType(0x22)
    public static let leSCRandomValue = ADType(0x23)
    public static let uri = ADType(0x24)
    public static let indoorPositioning = ADType(0x25)
    public static let transportDiscoveryData = ADType(0x26)
    public static let leSupportedFeatures = ADType(0x27)
    public static let channelMapUpdateIndication = ADType(0x28)
    public static let pbADV = ADType(0x29)
    public static let meshMessage = ADType(0x2A)
    public static let meshBeacon = ADType(0x2B)
    public static let bigInfo = ADType(0x2C)
    public static let broadcastCode = ADType(0x2D)
    public static let resolvableSetIdentifier = ADType(0x2E)
    public static let advertisingIntervalLong = ADType(0x2F)
    public static let broadcastName = ADType(0x30)
    public static let encryptedAdvertisingData = ADType(0x31)
    public static let periodicAdvertisingResponseTimingInformation = ADType(0x32)
    public static let electronicShelfLabel = ADType(0x34)
    public static let threeDInformationData = ADType(0x3D)
    public static let manufacturerSpecificData = ADType(0xFF)

    /// `Complete Local Name`, or `Unknown`.
    public var name: String { ADDecoding.typeNames.name(UInt64(rawValue)) ?? "Unknown" }
    /// `Complete Local Name (0x09)`.
    public var description: String { "\(name) (0x\(Hex.pad(rawValue, 2)))" }
}
