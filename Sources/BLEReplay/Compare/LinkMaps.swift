import BLEProtocol

/// What differs between the recorded and the live link by construction: connection handles the
/// controller chose (learned from Connection Complete events), peer addresses the user maps
/// (`--map-address OLD=NEW`), and the connection-interval range the host asked for.
struct LinkMaps: Sendable {
    /// Recorded handle → live handle.
    private(set) var handles: [UInt16: UInt16] = [:]
    /// Recorded address → live address.
    var addresses: [BDAddr: BDAddr] = [:]
    /// Recorded address → the address type the live peer uses (a twin's random static address
    /// standing for a recorded public one), written in the type parameter before the address.
    var addressTypes: [BDAddr: UInt8] = [:]
    /// The interval range (×1.25 ms) of the last connection request, for the next Connection Complete.
    var pendingIntervalRange: ClosedRange<UInt64>?
    /// Interval ranges of LE Connection Update requests, by live handle.
    var updateIntervalRanges: [UInt16: ClosedRange<UInt64>] = [:]

    /// Identity when the recorded handle is not known yet (same controller family).
    func live(_ recorded: UInt16) -> UInt16 { handles[recorded] ?? recorded }

    /// The recorded handle a live handle stands for (for rewriting packets the other way).
    func recorded(_ live: UInt16) -> UInt16 { handles.first { $0.value == live }?.key ?? live }

    mutating func learn(recorded: UInt16, live: UInt16) { handles[recorded] = live }

    func live(_ address: BDAddr) -> BDAddr { addresses[address] ?? address }
    /// The recorded address a live one stands for.
    func recordedAddress(_ live: BDAddr) -> BDAddr { addresses.first { $0.value == live }?.key ?? live }

    /// Parses `OLD=NEW` (`C0:5E:1A:00:00:02=D0:11:22:33:44:55`).
    static func parseAddressMapping(_ text: String) -> (BDAddr, BDAddr)? {
        let parts = text.split(separator: "=")
        guard parts.count == 2, let old = BDAddr(string: String(parts[0])), let new = BDAddr(string: String(parts[1])) else { return nil }
        return (old, new)
    }
}

/// What a live unit is matched on: the same kind of packet, for the same command or connection.
/// Field differences are found afterwards by the comparator, so a key is deliberately coarse:
/// an ATT Error Response matches the Read Response it replaces, a Command Status the Command
/// Complete it replaces.
enum MatchKey: Hashable, Sendable {
    /// Command Complete or Command Status for an opcode.
    case commandResponse(UInt16)
    /// Any Connection Complete variant (the comparator tells them apart).
    case connectionComplete
    case event(code: UInt8, subevent: UInt8?, handle: UInt16?)
    /// A command from the host (emulate).
    case command(UInt16)
    /// ATT on a connection: responses match by order (one request outstanding per bearer,
    /// Core v5.4 Vol 3 Part F 3.3.2), notifications and indications by attribute handle.
    case att(handle: UInt16, kind: ATTKey)
    case l2cap(handle: UInt16, channel: UInt16)
    case raw(type: UInt8, handle: UInt16?)

    enum ATTKey: Hashable, Sendable {
        case response, request, command, confirmation
        case notification(UInt16), indication(UInt16)
        case other(UInt8)
    }

    /// The key of `view`, with connection handles translated by `handle` (recorded → live for
    /// expected units; identity for live ones).
    init(_ view: UnitView, handle translate: (UInt16) -> UInt16) {
        let h = view.handle.map(translate)
        switch view.unit.content {
        case .command:
            self = .command(view.opcode ?? 0)
        case .event:
            if let opcode = view.opcode { self = .commandResponse(opcode); return }
            if view.isConnectionComplete { self = .connectionComplete; return }
            // Encryption Change v1 and v2 (Core v5.4 Vol 4 Part E 7.7.8, 7.7.8.1): one event (rule `event-variant`).
            if view.eventCode == HCIEventCode.encryptionChangeV2 { self = .event(code: HCIEventCode.encryptionChange, subevent: nil, handle: h); return }
            self = .event(code: view.eventCode ?? 0, subevent: view.subevent, handle: h)
        case let .l2cap(_, pdu):
            let handle = h ?? 0
            guard let op = view.attOpcode else { self = .l2cap(handle: handle, channel: view.channel ?? 0); return }
            // The Attribute Handle of a notification or indication (Core v5.4 Vol 3 Part F 3.4.7).
            let attribute = pdu.withReader { r -> UInt16? in
                guard case let .att(att)? = try? L2CAP.decode(&r) else { return nil }
                return att.handle
            } ?? 0
            switch op.kind {
            case .response?: self = .att(handle: handle, kind: .response)
            case .request?: self = .att(handle: handle, kind: .request)
            case .command?: self = .att(handle: handle, kind: .command)
            case .confirmation?: self = .att(handle: handle, kind: .confirmation)
            case .notification?: self = .att(handle: handle, kind: .notification(attribute))
            case .indication?: self = .att(handle: handle, kind: .indication(attribute))
            case nil: self = .att(handle: handle, kind: .other(op.rawValue))
            }
        case let .raw(p):
            self = .raw(type: p.type.rawValue, handle: h)
        }
    }
}
