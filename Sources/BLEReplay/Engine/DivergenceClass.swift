import BLEProtocol

/// Whether a divergence is about the controller of the day (`environment`) or about what the
/// recording is a test of (`behaviour`): ATT, SMP, L2CAP signalling, connection outcomes.
///
/// A field log is taken on one phone's controller and replayed on another (RootCanal, Bumble, a
/// development board): vendor commands, the controller's identity and capabilities, its power-on
/// events and its answers to configuration commands differ without anything being wrong. Those
/// divergences are listed (once) but do not fail a run unless `--strict environment`.
public enum DivergenceClass: String, Sendable, CaseIterable {
    case environment
    case behaviour

    /// Commands whose outcome is a connection's: their Command Status/Complete is behaviour.
    /// Core v5.4 Vol 4 Part E 7.1.5–7.1.7, 7.8.12–7.8.13, 7.8.24–7.8.26, 7.8.66.
    static let connectionOpcodes: Set<UInt16> = [
        HCIOpcode.createConnection.rawValue, HCIOpcode.disconnect.rawValue, HCIOpcode.createConnectionCancel.rawValue,
        HCIOpcode.leCreateConnection.rawValue, HCIOpcode.leCreateConnectionCancel.rawValue,
        HCIOpcode.leExtendedCreateConnection.rawValue, HCIOpcode.leExtendedCreateConnectionV2.rawValue,
        HCIOpcode.leEnableEncryption.rawValue, HCIOpcode.leLongTermKeyRequestReply.rawValue,
        HCIOpcode.leLongTermKeyRequestNegativeReply.rawValue,
    ]
    /// Events that are a connection's outcome (Core v5.4 Vol 4 Part E 7.7.3, 7.7.5, 7.7.8, 7.7.39, 7.7.65.1/.5/.10).
    static let connectionEvents: Set<UInt8> = [
        HCIEventCode.connectionComplete, HCIEventCode.disconnectionComplete, HCIEventCode.encryptionChange,
        HCIEventCode.encryptionChangeV2, HCIEventCode.encryptionKeyRefreshComplete,
    ]
    static let connectionSubevents: Set<UInt8> = [
        LESubevent.connectionComplete, LESubevent.enhancedConnectionComplete, LESubevent.enhancedConnectionCompleteV2,
        LESubevent.longTermKeyRequest,
    ]

    /// The class of a divergence on `unit` (the recorded one, else the live one).
    /// - Parameters:
    ///   - step: the divergence's step; controller packets of step 0 (before the host's first
    ///     packet: the recorded controller's power-on events) are environment.
    ///   - fromHost: the packet in question goes host → controller.
    static func of(_ unit: LinkUnit?, step: Int, fromHost: Bool) -> DivergenceClass {
        // No unit: a flow-control stall (no command credit, no ACL buffer) is the controller's.
        guard let unit else { return fromHost ? .environment : .behaviour }
        switch unit.content {
        case let .l2cap(h, _): return h == UnitView.androidVendorHandle ? .environment : .behaviour
        case .raw: return .behaviour
        case let .command(b):
            guard let opcode = b.withReader({ HCIPacketHeader.commandOpcode($0) }) else { return .behaviour }
            return opcode.isVendor ? .environment : .behaviour
        case let .event(b):
            guard let code = b.first else { return .environment }
            if code == HCIEventCode.vendor { return .environment }
            if step == 0 && !fromHost { return .environment }
            if connectionEvents.contains(code) { return .behaviour }
            if code == HCIEventCode.leMeta {
                let subevent = b.withReader { HCIPacketHeader.leSubevent($0) }
                return subevent.map(connectionSubevents.contains) == true ? .behaviour : .environment
            }
            if let opcode = b.withReader({ HCIPacketHeader.answeredOpcode($0) }), connectionOpcodes.contains(opcode) { return .behaviour }
            // Everything else the controller says of itself: vendor and configuration commands'
            // answers, local/remote version and features, codecs, buffer sizes, advertising reports.
            return .environment
        }
    }
}

extension DivergenceClass {
    /// The answer to LE Create Connection Cancel differs only in whether a connection attempt was
    /// still pending when it came: a controller answers Command Disallowed when none is (Core v5.4
    /// Vol 4 Part E 7.8.13), and whether the attempt had already ended (the device found, or the
    /// initiator never started) is the controller's and the radio's timing, not the host's. What
    /// became of the attempt is compared where it is behaviour: in its connection complete.
    static func isCancelRace(expected: LinkUnit, actual: LinkUnit) -> Bool {
        guard case let .event(e) = expected.content, case let .event(a) = actual.content else { return false }
        let cancel = HCIOpcode.leCreateConnectionCancel.rawValue
        guard e.withReader({ HCIPacketHeader.answeredOpcode($0) }) == cancel, a.withReader({ HCIPacketHeader.answeredOpcode($0) }) == cancel,
              let recorded = e.withReader({ HCIPacketHeader.answeredStatus($0) }), let live = a.withReader({ HCIPacketHeader.answeredStatus($0) }),
              recorded != live else { return false }
        return Set([recorded, live]).isSubset(of: [HCIStatus.success.rawValue, HCIStatus.commandDisallowed.rawValue])
    }
}

extension Divergence {
    /// Environment or behaviour (see `DivergenceClass`).
    public var divergenceClass: DivergenceClass {
        if let classOverride { return classOverride }
        if kind == .mismatch, let expected, let actual, DivergenceClass.isCancelRace(expected: expected, actual: actual) { return .environment }
        return DivergenceClass.of(expected ?? actual, step: step, fromHost: fromHost)
    }
}

extension ReplayOutcome {
    public var behaviourDivergences: [Divergence] { divergences.filter { $0.divergenceClass == .behaviour } }
    public var environmentDivergences: [Divergence] { divergences.filter { $0.divergenceClass == .environment } }
}
