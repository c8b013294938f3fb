import BLEBytes
import BLEProtocol

/// The attribute database of one GATT server, rebuilt from the discovery responses seen in the
/// capture (Core v5.4 Vol 3 Part G 4.4–4.7) and from handles used later. Context is implicitly
/// versioned by frame: the streaming pass names a handle by what discovery had shown *then*.
public final class GATTDatabase: @unchecked Sendable {   // safe: mutated only by the single analysis pass
    public struct Service: Sendable {
        public var handle: UInt16
        public var endHandle: UInt16
        public var uuid: BluetoothUUID
        public var primary: Bool
        public var frame: Int
    }
    public struct Characteristic: Sendable {
        /// Handle of the characteristic declaration.
        public var declarationHandle: UInt16
        public var valueHandle: UInt16
        public var properties: UInt8
        public var uuid: BluetoothUUID
        public var frame: Int

        public var canNotify: Bool { properties & 0x10 != 0 }
        public var canIndicate: Bool { properties & 0x20 != 0 }
    }
    public struct Descriptor: Sendable {
        public var handle: UInt16
        public var uuid: BluetoothUUID
        /// The frame of the Find Information Response that showed it (the latest one).
        public var frame = 0
    }
    public struct Include: Sendable {
        public var handle: UInt16
        public var range: ATT.HandleRange
        public var uuid: BluetoothUUID?
    }

    /// Who serves this database: the peer's address, or the local host (peripheral-side captures).
    public let owner: String
    @exclusivity(unchecked) public private(set) var services: [UInt16: Service] = [:] { didSet { names.removeAll(keepingCapacity: true) } }
    /// By declaration handle.
    @exclusivity(unchecked) public private(set) var characteristics: [UInt16: Characteristic] = [:] { didSet { names.removeAll(keepingCapacity: true) } }
    @exclusivity(unchecked) public private(set) var descriptors: [UInt16: Descriptor] = [:] { didSet { names.removeAll(keepingCapacity: true) } }
    /// `name(of:)`, `attribute(of:)` and `describe(_:)` per handle, as of the current database (every
    /// change above clears it): the packet list names the same few streamed handles millions of
    /// times, and the story names a connection's attributes several times each.
    @exclusivity(unchecked) private var names: [UInt16: Named?] = [:]
    private struct Named { let name: String; let attribute: String; let described: String }
    @exclusivity(unchecked) public private(set) var includes: [UInt16: Include] = [:]
    @exclusivity(unchecked) private var byValueHandle: [UInt16: UInt16] = [:]   // value handle → declaration handle
    /// Short values read for well-known characteristics (Device Name, Manufacturer Name…), bounded.
    @exclusivity(unchecked) public private(set) var values: [UInt16: [UInt8]] = [:]
    static let maxKeptValue = 64

    /// The connection whose discovery began this table, and which version of the server's table it
    /// is (2 and up: the server changed its table between connections, `SessionModel.tableChanged`).
    @exclusivity(unchecked) public internal(set) var builtBy: Int?
    @exclusivity(unchecked) public internal(set) var version = 1
    /// Set when the pass ends (`SessionModel.resolvePeerNames`): the connections that used this
    /// table, in order, and the name and address the report gives their peer, so `gatt` names a
    /// server as the report and the timeline name its connections.
    @exclusivity(unchecked) public internal(set) var servedConnections: [Int] = []
    @exclusivity(unchecked) public internal(set) var peerName: String?
    @exclusivity(unchecked) public internal(set) var peerAddress: BDAddr?

    public init(owner: String) { self.owner = owner }

    public var isEmpty: Bool { services.isEmpty && characteristics.isEmpty && descriptors.isEmpty }

    func addService(handle: UInt16, end: UInt16, uuid: BluetoothUUID, primary: Bool, frame: Int) {
        services[handle] = Service(handle: handle, endHandle: end, uuid: uuid, primary: primary, frame: frame)
    }

    func addCharacteristic(declaration: UInt16, value: UInt16, properties: UInt8, uuid: BluetoothUUID, frame: Int) {
        characteristics[declaration] = Characteristic(declarationHandle: declaration, valueHandle: value,
                                                      properties: properties, uuid: uuid, frame: frame)
        byValueHandle[value] = declaration
        descriptors[value] = nil   // a Find Information entry for the value handle is the value, not a descriptor
    }

    func addInclude(handle: UInt16, range: ATT.HandleRange, uuid: BluetoothUUID?) {
        includes[handle] = Include(handle: handle, range: range, uuid: uuid)
    }

    /// A Find Information entry: declarations are known from elsewhere; value handles are skipped.
    func addInformation(handle: UInt16, uuid: BluetoothUUID, frame: Int = 0) {
        if [BluetoothUUID.primaryService, .secondaryService, .characteristic, .include].contains(uuid) { return }
        if byValueHandle[handle] != nil { return }
        descriptors[handle] = Descriptor(handle: handle, uuid: uuid, frame: frame)
    }

    /// What discovery found between two frames (a connection's span): services, characteristics and
    /// descriptors whose latest discovery response lies in it.
    public func found(from first: Int, to last: Int) -> (services: Int, characteristics: Int, descriptors: Int) {
        let span = first ... max(first, last)
        return (services.values.count { span.contains($0.frame) },
                characteristics.values.count { span.contains($0.frame) },
                descriptors.values.count { span.contains($0.frame) })
    }

    func keepValue(_ handle: UInt16, _ bytes: [UInt8]) {
        values[handle] = Array(bytes.prefix(Self.maxKeptValue))
    }

    /// The characteristic whose value is `handle`.
    public func characteristic(valueHandle handle: UInt16) -> Characteristic? {
        byValueHandle[handle].flatMap { characteristics[$0] }
    }

    /// The characteristic a descriptor (or value) handle belongs to: the nearest declaration at or below it.
    public func owningCharacteristic(of handle: UInt16) -> Characteristic? {
        var best: Characteristic? = nil
        for c in characteristics.values where c.declarationHandle <= handle {
            if best == nil || c.declarationHandle > best!.declarationHandle { best = c }   // safe: checked non-nil
        }
        guard let best else { return nil }
        // Not past the end of its service.
        if let s = service(containing: best.declarationHandle), handle > s.endHandle { return nil }
        return best
    }

    /// The service whose range holds `handle`; with overlapping ranges (a hostile or broken server),
    /// the one starting last — chosen deterministically, never by dictionary order.
    public func service(containing handle: UInt16) -> Service? {
        var best: Service? = nil
        for s in services.values where s.handle <= handle && handle <= s.endHandle {
            if best.map({ s.handle > $0.handle || (s.handle == $0.handle && s.endHandle < $0.endHandle) }) ?? true { best = s }
        }
        return best
    }

    /// The UUID of the attribute at `handle`, as far as discovery showed it.
    public func uuid(of handle: UInt16) -> BluetoothUUID? {
        if let c = characteristic(valueHandle: handle) { return c.uuid }
        if let d = descriptors[handle] { return d.uuid }
        if characteristics[handle] != nil { return .characteristic }
        if let s = services[handle] { return s.primary ? .primaryService : .secondaryService }
        return nil
    }

    /// `Heart Rate Measurement (0x2A37) @0x0010`, `Client Characteristic Configuration of Heart Rate
    /// Measurement @0x0011`: what a handle is, for every PDU that names one.
    public func describe(_ handle: UInt16) -> String? { named(handle)?.described }

    /// What a handle is, without the handle: `Heart Rate Measurement (0x2A37)`.
    public func name(of handle: UInt16) -> String? { named(handle)?.name }

    /// What a handle is, as the packet list shows it: `Heart Rate Measurement (0x2A37) @0x000C`.
    public func attribute(of handle: UInt16) -> String? { named(handle)?.attribute }

    private func named(_ handle: UInt16) -> Named? {
        if let known = names[handle] { return known }
        let named = computeName(of: handle).map {
            Named(name: $0, attribute: ATTDisplayContext.attributeText($0, handle: handle), described: $0 + " @0x" + Hex.pad(handle, 4))
        }
        names[handle] = .some(named)
        return named
    }

    private func computeName(of handle: UInt16) -> String? {
        if let c = characteristic(valueHandle: handle) { return c.uuid.gattLabel(.characteristic) }
        if let d = descriptors[handle] {
            let owner = owningCharacteristic(of: handle)
            if let owner, owner.uuid == d.uuid { return owner.uuid.gattLabel(.characteristic) }
            return d.uuid.gattLabel(.descriptor) + (owner.map { " of " + $0.uuid.gattLabel(.characteristic) } ?? "")
        }
        if let c = characteristics[handle] { return "Characteristic declaration of " + c.uuid.gattLabel(.characteristic) }
        if let s = services[handle] { return (s.primary ? "Primary Service " : "Secondary Service ") + s.uuid.gattLabel(.service) }
        return nil
    }

    /// Is `handle` a Client Characteristic Configuration descriptor?
    /// A CCCD by discovery, or — without discovery of it — the handle right after a value that can notify
    /// or indicate (a 2-byte write there is very likely a CCCD write).
    public func looksLikeCCCD(_ handle: UInt16) -> Bool {
        // safe: handle 0 wraps to 0xFFFF, which no characteristic value uses here
        isCCCD(handle) || characteristic(valueHandle: handle &- 1).map { $0.canNotify || $0.canIndicate } == true
    }

    public func isCCCD(_ handle: UInt16) -> Bool {
        descriptors[handle]?.uuid == .clientCharacteristicConfiguration
    }
}

/// Where an attribute UUID is used, so that a SIG name of another category is not shown (vendors
/// often reuse 0xFFF0–0xFFF4, which the SIG assigned to consortia as *service* UUIDs).
public enum AttributeRole: Sendable { case service, characteristic, descriptor }

/// Which side is the GATT server for an ATT PDU (Core v5.4 Vol 3 Part F 3.4): requests,
/// commands and confirmations go client → server (even opcodes); responses, notifications and
/// indications go server → client (odd opcodes 0x01–0x23).
public enum ATTRoles {
    public static func serverIsHost(_ opcode: ATTOpcode, sent: Bool) -> Bool {
        let serverSends = opcode.rawValue & 1 == 1 && opcode.rawValue <= 0x23
        return serverSends == sent
    }
}

extension BluetoothUUID {
    /// `Heart Rate Measurement (0x2A37)` when the SIG name fits the role, else just the UUID.
    /// A vendor's 128-bit UUID everyone knows (the Nordic UART Service, Apple's ANCS; `AssignedNumbers.uuid128Name`,
    /// the names tshark gives) is named whatever the role: it has no SIG category to check.
    public func gattLabel(_ role: AttributeRole) -> String {
        guard let category else { return uuid16 == nil ? displayName : description }
        let fits: Bool
        switch role {
        case .service: fits = category == .service || category == .memberService
        case .characteristic: fits = category == .characteristic
        case .descriptor: fits = category == .descriptor || category == .declaration
        }
        return fits ? displayName : description
    }
}
