import BLEBytes

/// A typed summary of advertising / scan response / EIR data for the `adv` command: what an
/// advertiser says about itself. Values are copied (this is per advertiser, not per frame).
/// Malformed structures do not stop parsing: each gives a line in `malformed`.
public struct AdvertisingData: Sendable, Hashable {
    /// Manufacturer Specific Data: company identifier and the bytes after it.
    public struct Manufacturer: Sendable, Hashable {
        public var company: UInt16
        public var data: [UInt8]
        public init(company: UInt16, data: [UInt8]) { (self.company, self.data) = (company, data) }
        /// `Apple, Inc.`, from Assigned Numbers.
        public var companyName: String? { AssignedNumbers.companyName(company) }
    }

    /// Service Data: a service UUID and its data.
    public struct ServiceData: Sendable, Hashable {
        public var uuid: BluetoothUUID
        public var data: [UInt8]
        public init(uuid: BluetoothUUID, data: [UInt8]) { (self.uuid, self.data) = (uuid, data) }
    }

    /// Flags (first octet), Core Supplement Part A 1.3.
    public var flags: UInt8?
    public var shortName: String?
    public var completeName: String?
    /// Service UUIDs from the complete and incomplete 16/32/128-bit lists, in order.
    public var services: [BluetoothUUID] = []
    /// True when a list of service UUIDs was marked complete.
    public var servicesComplete = false
    /// Service Solicitation UUIDs.
    public var solicitedServices: [BluetoothUUID] = []
    /// Tx Power Level, dBm.
    public var txPower: Int8?
    public var appearance: UInt16?
    public var manufacturer: [Manufacturer] = []
    public var serviceData: [ServiceData] = []
    public var iBeacon: AD.IBeacon?
    public var eddystone: AD.Eddystone?
    public var uri: String?
    public var broadcastName: String?
    /// LE Role, Core Supplement Part A 1.17.
    public var leRole: UInt8?
    /// The AD types present, in order.
    public var types: [ADType] = []
    /// Significant bytes: up to the end of the last structure (padding excluded).
    public var length = 0
    /// One line per malformed structure: `Complete List of 16-bit Service UUIDs (0x03): …`.
    public var malformed: [String] = []

    public init() {}

    /// The complete name, else the shortened one.
    public var name: String? { completeName ?? shortName }

    /// More than legacy advertising PDUs carry (31 bytes): only extended advertising can send it.
    public var oversizeForLegacy: Bool { length > AD.legacyMaxLength }

    /// Parses AD structures from `r` (the data only, no length prefix).
    public static func parse(_ r: ByteReader) -> AdvertisingData {
        var ad = AdvertisingData()
        ad.add(r)
        return ad
    }

    /// Adds the structures of more data (a scan response after its advertisement).
    public mutating func merge(_ other: AdvertisingData) {
        flags = flags ?? other.flags
        shortName = shortName ?? other.shortName
        completeName = completeName ?? other.completeName
        services += other.services
        servicesComplete = servicesComplete || other.servicesComplete
        solicitedServices += other.solicitedServices
        txPower = txPower ?? other.txPower
        appearance = appearance ?? other.appearance
        manufacturer += other.manufacturer
        serviceData += other.serviceData
        iBeacon = iBeacon ?? other.iBeacon
        eddystone = eddystone ?? other.eddystone
        uri = uri ?? other.uri
        broadcastName = broadcastName ?? other.broadcastName
        leRole = leRole ?? other.leRole
        types += other.types
        length = max(length, other.length)
        malformed += other.malformed
    }

    mutating func add(_ r: ByteReader) {
        var it = AD.StructureIterator(r)
        while var s = it.next() {
            types.append(s.type)
            do {
                try add(s.type, &s.data)
            } catch {
                malformed.append("\(s.type): \(error)")
            }
        }
        length = it.significantLength
        if let problem = it.problem { malformed.append(problem) }
    }

    private static func text(_ r: inout ByteReader) -> String {
        var bytes = r.rest().bytes[...]
        while let last = bytes.last, last == 0 { bytes = bytes.dropLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func uuids(_ r: inout ByteReader, width: Int, into list: inout [BluetoothUUID]) throws(DecodeError) {
        guard r.remaining % width == 0 else {   // safe: width is the constant 2, 4 or 16
            throw DecodeError(kind: .lengthMismatch(declared: width, actual: r.remaining), offset: r.absoluteOffset, field: "UUID list")
        }
        while !r.isAtEnd { list.append(try r.uuid(width: width)) }
    }

    private mutating func add(_ type: ADType, _ r: inout ByteReader) throws(DecodeError) {
        switch type {
        case .flags: flags = r.isAtEnd ? 0 : try r.u8("Flags")
        case .incompleteUUID16, .completeUUID16, .incompleteUUID32, .completeUUID32, .incompleteUUID128, .completeUUID128:
            let width = [2, 2, 4, 4, 16, 16][Int(type.rawValue &- 2)]   // safe: rawValue is 0x02…0x07
            try Self.uuids(&r, width: width, into: &services)
            if type.rawValue & 1 == 1 { servicesComplete = true }
        case .solicitationUUID16: try Self.uuids(&r, width: 2, into: &solicitedServices)
        case .solicitationUUID32: try Self.uuids(&r, width: 4, into: &solicitedServices)
        case .solicitationUUID128: try Self.uuids(&r, width: 16, into: &solicitedServices)
        case .shortenedLocalName: shortName = Self.text(&r)
        case .completeLocalName: completeName = Self.text(&r)
        case .broadcastName: broadcastName = Self.text(&r)
        case .txPowerLevel: txPower = try r.i8("Tx Power Level")
        case .appearance: appearance = try r.u16le("Appearance")
        case .leRole: leRole = try r.u8("LE Role")
        case .uri: uri = try AD.decodeURI(&r)
        case .serviceData16, .serviceData32, .serviceData128:
            let width = type == .serviceData16 ? 2 : type == .serviceData32 ? 4 : 16
            let uuid = try r.uuid(width: width, "Service UUID")
            serviceData.append(ServiceData(uuid: uuid, data: Array(r.remainingBytes)))
            if width == 2, uuid.uuid16 == AD.Eddystone.serviceUUID, !r.isAtEnd {
                eddystone = try AD.Eddystone.parse(&r)
            }
        case .manufacturerSpecificData:
            let company = try r.u16le("Company Identifier")
            manufacturer.append(Manufacturer(company: company, data: Array(r.remainingBytes)))
            if let beacon = try AD.IBeacon.parse(company: company, r) { iBeacon = beacon }
        default:
            break
        }
    }
}
