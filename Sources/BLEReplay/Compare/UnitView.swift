import BLEBytes
import BLEProtocol

/// How a controller → host unit is treated before any comparison.
enum UnitCategory: Sendable, Equatable {
    case normal
    /// LE (Extended, Directed) Advertising Report: rule `advertising`.
    case advertising
    /// Number Of Completed Packets, Command Complete for NOP (opcode 0): rule `flow-control`.
    case flowControl
    /// Vendor-specific event 0xFF or an event code the spec does not assign, and ACL on Android's
    /// vendor handle 0x0EDC or on a handle above 0x0EFF: rule `vendor`.
    case vendor
    /// Controller-initiated link-layer events: rule `ll-events`.
    case linkLayer

    /// The rule that relaxes this category, if any.
    var rule: String? {
        switch self {
        case .normal: nil
        case .advertising: ReplayRules.advertising
        case .flowControl: ReplayRules.flowControl
        case .vendor: ReplayRules.vendor
        case .linkLayer: ReplayRules.linkLayerEvents
        }
    }
}

/// What a unit is, decoded once with the project's decoders: the display layers (for the report
/// and the field comparison) and the facts matching needs.
struct UnitView: Sendable {
    let unit: LinkUnit
    /// (`var` so a test can give a unit fields no decoder makes.)
    var layers: [Layer]
    var fields: [FlatField]
    let category: UnitCategory
    /// HCI event code, and the LE subevent for 0x3E.
    let eventCode: UInt8?
    let subevent: UInt8?
    /// The command's opcode, or the opcode a Command Complete / Status answers.
    let opcode: UInt16?
    /// The connection handle: the ACL header's, or the event's first top-level `Handle` field.
    let handle: UInt16?
    /// L2CAP channel and, on the ATT channel, the opcode.
    let channel: UInt16?
    let attOpcode: ATTOpcode?
    /// On the LE SMP channel (0x0006), the command code.
    let smpCode: SMPCode?

    init(_ unit: LinkUnit) {
        self.unit = unit
        var eventCode: UInt8?, subevent: UInt8?, opcode: UInt16?, handle: UInt16?, channel: UInt16?, att: ATTOpcode?, smp: SMPCode?
        var pduChannel: L2CAP.ChannelID?
        var layers: [Layer]
        switch unit.content {
        case let .command(b):
            layers = [Self.decode(.command, b)]
            opcode = b.withReader { HCIPacketHeader.commandOpcode($0)?.rawValue }
        case let .event(b):
            layers = [Self.decode(.event, b)]
            b.withReader { r in
                (eventCode, subevent, opcode) = (HCIPacketHeader.eventCode(r), HCIPacketHeader.leSubevent(r), HCIPacketHeader.answeredOpcode(r))
            }
        case let .l2cap(h, pdu):
            layers = pdu.withUnsafeBytes { raw in
                var r = ByteReader(raw)
                return L2CAPDisplay.decode(pdu: &r)
            }
            handle = h
            pdu.withReader { r in
                guard let header = L2CAP.BasicHeader.peek(r) else { return }
                (pduChannel, channel) = (header.channel, header.channel.rawValue)
                let code = r.peekU8(at: L2CAP.basicHeaderLength)   // the first byte of the information payload
                if header.channel == .att { att = code.map { ATTOpcode($0) } }
                if header.channel == .smp { smp = code.map { SMPCode($0) } }
            }
        case let .raw(p):
            layers = [Self.decode(p.type, p.bytes)]
            if p.type == .acl { handle = p.bytes.withReader { HCIPacketHeader.aclHandle($0) } }
        }
        let fields = FlatField.flatten(layers, channel: pduChannel)
        if handle == nil, case .event = unit.content {
            handle = fields.first { $0.id == .connectionHandle && $0.topLevel }.flatMap { if case let .integer(v, _) = $0.value { UInt16(truncatingIfNeeded: v) } else { nil } }
        }
        (self.layers, self.fields) = (layers, fields)
        (self.eventCode, self.subevent, self.opcode, self.handle, self.channel, self.attOpcode) = (eventCode, subevent, opcode, handle, channel, att)
        smpCode = smp
        let vendorHandle = handle.map { $0 == Self.androidVendorHandle || $0 > Self.maxConnectionHandle } ?? false
        category = vendorHandle && eventCode == nil ? .vendor : Self.category(eventCode: eventCode, subevent: subevent, opcode: opcode)
    }

    /// Connection handles are 0x0000–0x0EFF (Core v5.4 Vol 4 Part E 5.4.2); ACL data on a handle
    /// above is no connection's: Broadcom controllers log diagnostics there (0x0FF1 in an Android
    /// log), as Qualcomm ones do on 0x0EDC.
    static let maxConnectionHandle: UInt16 = 0x0EFF

    /// Android's Bluetooth stack logs the controller's vendor diagnostics (Broadcom/Qualcomm) as ACL
    /// data on handle 0x0EDC, a handle no connection has: the phone's, not the session's.
    static let androidVendorHandle: UInt16 = 0x0EDC

    static func decode(_ type: HCIPacketType, _ bytes: [UInt8]) -> Layer {
        bytes.withUnsafeBytes { raw in
            var r = ByteReader(raw)
            return HCIDecoder.decode(type, &r)
        }
    }

    static func category(eventCode: UInt8?, subevent: UInt8?, opcode: UInt16?) -> UnitCategory {
        switch eventCode {
        case HCIEventCode.vendor?: return .vendor
        // An event code the Core spec does not assign (no row in the event table: 0x60 and 0x6E
        // in a PacketLogger capture of an Apple host) is the recorded controller's own.
        case let code? where !HCIDecoder.isAssignedEvent(code): return .vendor
        case HCIEventCode.numberOfCompletedPackets?: return .flowControl
        case HCIEventCode.commandComplete? where opcode == 0: return .flowControl
        case HCIEventCode.leMeta?:
            switch subevent {
            case LESubevent.advertisingReport?, LESubevent.extendedAdvertisingReport?, LESubevent.directedAdvertisingReport?:
                return .advertising
            case LESubevent.dataLengthChange?, LESubevent.phyUpdateComplete?, LESubevent.channelSelectionAlgorithm?:
                return .linkLayer
            default: return .normal
            }
        default: return .normal
        }
    }

    /// LE Connection Complete, LE Enhanced Connection Complete v1/v2, BR/EDR Connection Complete.
    var isConnectionComplete: Bool {
        if eventCode == HCIEventCode.connectionComplete { return true }
        guard eventCode == HCIEventCode.leMeta else { return false }
        return subevent == LESubevent.connectionComplete || subevent == LESubevent.enhancedConnectionComplete
            || subevent == LESubevent.enhancedConnectionCompleteV2
    }

    var isDisconnectionComplete: Bool { eventCode == HCIEventCode.disconnectionComplete }

    /// The value of the first top-level field `id` (never a display label: renaming one changes no
    /// matching), as an integer.
    func integer(_ id: FieldID) -> UInt64? {
        for f in fields where f.id == id && f.topLevel { if case let .integer(v, _) = f.value { return v } }
        return nil
    }

    /// The title of the first layer: `HCI Event: Command Complete (0x0e)`, plus the ATT/L2CAP name.
    var title: String {
        let names = layers.map { layer in
            layer.code.isEmpty ? "\(layer.protocolName): \(layer.name)" : "\(layer.protocolName): \(layer.name) (\(layer.code))"
        }
        switch unit.content {
        case .l2cap: return "ACL Data \(unit.fromHost ? "TX" : "RX") handle \(handle ?? 0) · " + names.suffix(from: min(1, names.count)).joined(separator: " · ")
        default:
            if let opcode, eventCode == HCIEventCode.commandComplete || eventCode == HCIEventCode.commandStatus {
                return (names.first ?? "") + " for " + HCIDecoder.commandName(HCIOpcode(rawValue: opcode))
            }
            if let sub = fields.first(where: { $0.id == .subevent && $0.topLevel }) { return (names.first ?? "") + " · " + ValueText.describe(sub.value) }
            return names.first ?? "?"
        }
    }
}
