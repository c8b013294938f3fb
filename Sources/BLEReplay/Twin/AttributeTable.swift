import BLEAnalysis
import BLEBytes
import BLEProtocol

/// The attribute table a twin serves: the recorded device's GATT database (rebuilt by the
/// analysis from the discovery responses, `GATTDatabase`) as ATT attributes with their handles,
/// types and declaration values, and the discovery procedures answered from it (Core v5.4 Vol 3
/// Part F 3.4.3–3.4.4, Part G 4.4–4.7). Characteristic values are not here: they come from the
/// recording's story (`TwinStory`).
public struct AttributeTable: Sendable {
    public struct Attribute: Sendable {
        public var handle: UInt16
        public var type: BluetoothUUID
        /// The declaration's value (service UUID, characteristic properties/handle/UUID, include);
        /// nil for characteristic values and descriptors, whose values the story holds.
        public var declaration: [UInt8]?
        /// Service declarations: the end of the group.
        public var groupEnd: UInt16?
    }

    /// In handle order.
    public private(set) var attributes: [Attribute] = []
    /// Which handle the device names in its Attribute Not Found answers to discovery. Core v5.4
    /// Vol 3 Part F 3.4.1.1 says the request's starting handle; some devices name the ending one or
    /// the one after it (a Mi Band 2), and the twin answers as the device did. Learned from the
    /// recording (`TwinStory.notFoundHandle`).
    public enum NotFoundHandle: Sendable, CaseIterable {
        case start, end, afterEnd
        public func handle(start: UInt16, end: UInt16) -> UInt16 {
            switch self {
            case .start: return start
            case .end: return end
            case .afterEnd: return end == 0xFFFF ? end : end + 1
            }
        }
    }
    public var notFoundHandle = NotFoundHandle.start

    public init(_ db: GATTDatabase?) {
        guard let db else { return }
        var byHandle: [UInt16: Attribute] = [:]
        for s in db.services.values {
            byHandle[s.handle] = Attribute(handle: s.handle, type: s.primary ? .primaryService : .secondaryService,
                                           declaration: ATTEncoding.uuidBytes(s.uuid), groupEnd: s.endHandle)
        }
        for i in db.includes.values {
            byHandle[i.handle] = Attribute(handle: i.handle, type: .include,
                                           declaration: GATTDeclaration.Include(range: i.range, uuid: i.uuid).bytes)
        }
        for c in db.characteristics.values {
            let declaration = GATTDeclaration.Characteristic(properties: c.properties, valueHandle: c.valueHandle, uuid: c.uuid)
            byHandle[c.declarationHandle] = Attribute(handle: c.declarationHandle, type: .characteristic, declaration: declaration.bytes)
            if byHandle[c.valueHandle] == nil { byHandle[c.valueHandle] = Attribute(handle: c.valueHandle, type: c.uuid) }
        }
        for d in db.descriptors.values where byHandle[d.handle] == nil {
            byHandle[d.handle] = Attribute(handle: d.handle, type: d.uuid)
        }
        attributes = byHandle.values.sorted { $0.handle < $1.handle }
    }

    public var isEmpty: Bool { attributes.isEmpty }
    public var services: [Attribute] { attributes.filter { $0.groupEnd != nil } }

    public func attribute(_ handle: UInt16) -> Attribute? {
        var lo = 0, hi = attributes.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if attributes[mid].handle < handle { lo = mid + 1 } else { hi = mid }
        }
        return lo < attributes.count && attributes[lo].handle == handle ? attributes[lo] : nil
    }

    private func inRange(_ start: UInt16, _ end: UInt16) -> ArraySlice<Attribute> {
        attributes.drop { $0.handle < start }.prefix { $0.handle <= end }
    }

    /// Answers a discovery request (Find Information, Find By Type Value, Read By Type of a
    /// declaration type, Read By Group Type) at `mtu`; nil for any other request, whose answer
    /// needs a value from the story.
    public func discovery(_ pdu: ArraySlice<UInt8>, mtu: Int) -> [UInt8]? {
        let b = Array(pdu)
        guard let first = b.first else { return nil }
        let op = ATTOpcode(first)
        guard [ATTOpcode.findInformationRequest, .findByTypeValueRequest, .readByTypeRequest, .readByGroupTypeRequest].contains(op) else { return nil }
        let decoded = TwinPDU.att(b)
        let range: ATT.HandleRange
        switch decoded {
        case let .findInformationRequest(r)?, let .readByTypeRequest(r, _)?, let .readByGroupTypeRequest(r, _)?: range = r
        case let .findByTypeValueRequest(request)?: range = request.range
        default:
            // Cut short, or a type of another width than 2 or 16 bytes: Invalid PDU (3.4.1.1; no
            // handle is relevant). A Read By Type the rules answer (a value's type) is not here.
            return op == .readByTypeRequest ? nil : ATTEncoding.errorResponse(request: op, handle: 0, .invalidPDU)
        }
        let (start, end) = (range.start, range.end)
        // 3.4.3.1 and the others: start 0 or start > end is Invalid Handle.
        if !range.isValid { return ATTEncoding.errorResponse(request: op, handle: start, .invalidHandle) }
        let notFound = ATTEncoding.errorResponse(request: op, handle: notFoundHandle.handle(start: start, end: end), .attributeNotFound)
        switch decoded {
        case .findInformationRequest?:
            let found = Array(inRange(start, end))
            guard let head = found.first else { return notFound }
            let short = head.type.uuid16 != nil
            let per = 2 + (short ? 2 : 16)
            let entries = found.prefix { ($0.type.uuid16 != nil) == short }.prefix(max(1, (mtu - 2) / per))
            return ATTEncoding.findInformationResponse(entries.map { ($0.handle, $0.type) })
        case let .findByTypeValueRequest(request)?:
            let value = TwinPDU.bytes(request.value, of: b)
            let found = inRange(start, end).filter { $0.type == request.type && $0.declaration == value }
            guard !found.isEmpty else { return notFound }
            return ATTEncoding.findByTypeValueResponse(found.prefix(max(1, (mtu - 1) / 4)).map { ($0.handle, $0.groupEnd ?? $0.handle) })
        case let .readByTypeRequest(_, type)?:
            guard type == .characteristic || type == .include else { return nil }
            let found = inRange(start, end).filter { $0.type == type }
            guard let head = found.first, let headValue = head.declaration else { return notFound }
            let length = min(headValue.count, mtu - 4, 253)
            let entries = found.prefix { $0.declaration?.count == headValue.count }.prefix(max(1, (mtu - 2) / (2 + length)))
            return ATTEncoding.readByTypeResponse(entries.map { ($0.handle, Array(($0.declaration ?? []).prefix(length))) })
        case let .readByGroupTypeRequest(_, type)?:
            guard type == .primaryService || type == .secondaryService else {
                return ATTEncoding.errorResponse(request: op, handle: start, .unsupportedGroupType)
            }
            let found = inRange(start, end).filter { $0.type == type }
            guard let head = found.first, let headValue = head.declaration else { return notFound }
            let length = min(headValue.count, mtu - 6, 251)
            let entries = found.prefix { $0.declaration?.count == headValue.count }.prefix(max(1, (mtu - 2) / (4 + length)))
            return ATTEncoding.readByGroupTypeResponse(entries.map { ($0.handle, $0.groupEnd ?? $0.handle, Array(($0.declaration ?? []).prefix(length))) })
        default:
            return nil
        }
    }
}
