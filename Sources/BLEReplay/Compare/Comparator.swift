import BLEProtocol

/// One field that differs between the recorded and the live packet.
public struct Difference: Sendable, Equatable {
    /// The field's path: `Status`, `ATT.Value`, `Reports[0].Data`.
    public var field: String
    public var expected: String
    public var actual: String
    /// The rule that would accept this difference (`--ignore RULE`), if one does.
    public var rule: String?
}

/// Compares a live unit with the recorded one it matched, field by field, applying `RuleSet`.
///
/// Both sides are decoded by the same display decoders (`HCIDecoder`, `L2CAPDisplay`), flattened
/// to paths, and compared by raw value. Connection handles go through the learned handle map,
/// peer addresses through `--map-address`; what the rules relax is dropped.
struct Comparator: Sendable {
    var rules: RuleSet

    /// Commands whose return parameters describe the controller, not the session (`controller-info`).
    static let controllerInfoOpcodes: Set<UInt16> = Set([
        HCIOpcode.readLocalVersionInformation, .readLocalSupportedCommands, .readLocalSupportedFeatures, .readLocalExtendedFeatures,
        .readBufferSize, .readLocalSupportedCodecs, .readLocalSupportedCodecsV2,
        .leReadBufferSize, .leReadBufferSizeV2, .leReadLocalSupportedFeatures, .leReadAdvertisingChannelTXPower,
        .leReadFilterAcceptListSize, .leRand, .leReadSupportedStates, .leReadSuggestedDefaultDataLength, .leReadResolvingListSize,
        .leReadMaximumDataLength, .leReadMaximumAdvertisingDataLength, .leReadNumberOfSupportedAdvertisingSets,
        .leReadPeriodicAdvertiserListSize, .leReadTransmitPower, .leReadRFPathCompensation,
    ].map(\.rawValue))
    /// Commands that set the controller's own address (`local-address`).
    static let localAddressOpcodes: Set<UInt16> = Set([HCIOpcode.readBDAddr, .leSetRandomAddress, .leSetAdvertisingSetRandomAddress].map(\.rawValue))
    /// SMP commands whose fields are random or key material, Core v5.4 Vol 3 Part H 3.5–3.6 (`smp-random`).
    static let randomSMPCommands = SMPDecoding.randomOrKeyCodes

    /// The differences that count under the rules.
    func differences(expected e: UnitView, actual a: UnitView, maps: LinkMaps) -> [Difference] {
        all(expected: e, actual: a, maps: maps).filter { d in d.rule.map { !rules.isRelaxed($0) } ?? true }
    }

    /// Every difference, with the rule that would accept it.
    func all(expected e: UnitView, actual a: UnitView, maps: LinkMaps) -> [Difference] {
        var out: [Difference] = []
        // A different message (Command Status for Command Complete, Error Response for Read
        // Response) is one difference; its fields are not comparable.
        for (le, la) in zip(e.layers, a.layers) where le.name != la.name || le.protocolName.description != la.protocolName.description {
            let variant = (e.isConnectionComplete && a.isConnectionComplete) || Self.encryptionVariants(e, a)
            out.append(Difference(field: "\(le.protocolName)", expected: Self.title(le), actual: Self.title(la) + Self.keyFields(la),
                                  rule: variant ? ReplayRules.eventVariant : nil))
            if !variant { return out }
        }
        if e.layers.count != a.layers.count {
            out.append(Difference(field: "layers", expected: e.layers.map(Self.title).joined(separator: " / "),
                                  actual: a.layers.map(Self.title).joined(separator: " / "), rule: nil))
            return out
        }
        // Fields pair up by path, in order; the ones left on either side are absent on the other.
        var actual: [String: ArraySlice<FlatField>] = [:]
        for f in a.fields { actual[f.path, default: []].append(f) }
        // Connection Complete variants have different fields; only the common ones are compared.
        let variant = (e.isConnectionComplete && a.isConnectionComplete && e.subevent != a.subevent) || Self.encryptionVariants(e, a)
        for f in e.fields {
            guard let g = actual[f.path]?.popFirst() else {
                if !variant { out.append(Difference(field: f.path, expected: ValueText.describe(f.value), actual: "(absent)", rule: nil)) }
                continue
            }
            if let d = compare(f, g, e: e, a: a, maps: maps) { out.append(d) }
        }
        if !variant {
            for f in a.fields where actual[f.path]?.first.map({ _ in true }) ?? false {
                if let g = actual[f.path]?.popFirst() {
                    out.append(Difference(field: g.path, expected: "(absent)", actual: ValueText.describe(g.value), rule: nil))
                }
            }
        }
        return out
    }

    private func compare(_ f: FlatField, _ g: FlatField, e: UnitView, a: UnitView, maps: LinkMaps) -> Difference? {
        func diff(_ rule: String?, expected: String? = nil) -> Difference? {
            Difference(field: f.path, expected: expected ?? ValueText.describe(f.value), actual: ValueText.describe(g.value), rule: rule)
        }
        if f.id == .l2capLength { return nil }   // implied by the payload
        // A connection attempt that failed on both sides: only its Status says anything (the
        // other fields of a failed connection complete are not defined, Core v5.4 Vol 4 Part E 7.7.65.1).
        if e.isConnectionComplete, a.isConnectionComplete, f.id != .status, let s = e.integer(.status), s != 0, let t = a.integer(.status), t != 0 { return nil }
        // A twin standing for a recorded public address with a random static one (`addressTypes`).
        if f.id == .peerAddressType, case let .integer(live, _) = g.value,
           let t = e.fields.lazy.compactMap({ field -> UInt8? in if case let .address(a, _) = field.value { return maps.addressTypes[a] } else { return nil } }).first {
            return UInt64(t) == live ? nil : diff(nil, expected: "\(t)")
        }
        if f.id == .numCommandPackets { return ValueText.same(f.value, g.value) ? nil : diff(ReplayRules.flowControl) }
        if f.id == .rssi { return ValueText.same(f.value, g.value) ? nil : diff(ReplayRules.rssi) }
        if let rule = rule(for: f, in: e) { return ValueText.same(f.value, g.value) ? nil : diff(rule) }
        if f.id == .subevent, e.isConnectionComplete, a.isConnectionComplete { return ValueText.same(f.value, g.value) ? nil : diff(ReplayRules.eventVariant) }

        switch (f.value, g.value) {
        case let (.integer(recorded, format), .integer(live, _)) where f.id == .connectionHandle:
            if e.isConnectionComplete { return nil }   // where the mapping is learned
            let expected = UInt64(maps.live(UInt16(truncatingIfNeeded: recorded)))
            return expected == live ? nil : diff(nil, expected: ValueText.integer(expected, format))
        case let (.address(recorded, type), .address(live, _)):
            let expected = maps.live(recorded)
            return expected == live ? nil : diff(nil, expected: ValueText.describe(.address(expected, type: type)))
        case let (.integer(_, _), .integer(live, _)) where f.id == .connectionInterval:
            if ValueText.same(f.value, g.value) { return nil }
            guard rules.isRelaxed(ReplayRules.connectionInterval) else { return diff(nil) }
            let range = e.isConnectionComplete ? maps.pendingIntervalRange : a.handle.flatMap { maps.updateIntervalRanges[$0] }
            guard let range, !range.contains(live) else { return nil }
            return diff(nil, expected: "within \(ValueText.integer(range.lowerBound, .scaled(bytes: 2, factor: 1.25, unit: "msec"))) – \(ValueText.integer(range.upperBound, .scaled(bytes: 2, factor: 1.25, unit: "msec")))")
        default:
            return ValueText.same(f.value, g.value) ? nil : diff(nil)
        }
    }

    /// The rule a field falls under because of what it is, or nil.
    private func rule(for f: FlatField, in e: UnitView) -> String? {
        if f.id == .txPower || f.id == .centralClockAccuracy { return ReplayRules.controllerInfo }
        if let op = e.opcode {
            if Self.controllerInfoOpcodes.contains(op), e.eventCode == HCIEventCode.commandComplete, f.id != .status, f.id != .commandOpcode {
                return ReplayRules.controllerInfo
            }
            if Self.localAddressOpcodes.contains(op), case .address = f.value { return ReplayRules.localAddress }
            if case .command = e.unit.content, [.longTermKey, .randomNumber, .encryptedDiversifier].contains(f.id) {
                return ReplayRules.smpRandom
            }
        }
        if f.id == .localAddress || f.id == .peerResolvableAddress { return ReplayRules.localAddress }
        if e.eventCode == HCIEventCode.leMeta, e.subevent == LESubevent.readLocalP256PublicKeyComplete || e.subevent == LESubevent.generateDHKeyComplete, f.id != .status, f.id != .subevent {
            return ReplayRules.controllerInfo   // LE Read Local P-256 Public Key / Generate DHKey Complete
        }
        if f.channel == .smp, let code = e.smpCode, Self.randomSMPCommands.contains(code) {
            return ReplayRules.smpRandom
        }
        if f.channel == .att, f.id == .attValue || f.id == .rest { return ReplayRules.attValue }
        // The recorded link was lost (Connection Timeout 0x08, LL Response Timeout 0x22): a live
        // peer (a twin) cannot lose the radio, it ends the link itself.
        if e.isDisconnectionComplete, f.id == .reason, case let .integer(r, _) = f.value, ReplayRules.linkLossReasons.contains(r) { return ReplayRules.linkLoss }
        // An encryption start the lost link cut short (Encryption Change (v2) with that Status,
        // Core v5.4 Vol 4 Part E 7.7.8, an iOS log): live the link holds, and encryption starts.
        if e.eventCode == HCIEventCode.encryptionChange || e.eventCode == HCIEventCode.encryptionChangeV2,
           let status = e.integer(.status), ReplayRules.linkLossReasons.contains(status) { return ReplayRules.linkLoss }
        return nil
    }

    /// Encryption Change and Encryption Change v2 (which adds the key size): one event.
    static func encryptionVariants(_ e: UnitView, _ a: UnitView) -> Bool {
        let codes: Set<UInt8?> = [HCIEventCode.encryptionChange, HCIEventCode.encryptionChangeV2]
        return e.eventCode != a.eventCode && codes.contains(e.eventCode) && codes.contains(a.eventCode)
    }

    static func title(_ layer: Layer) -> String {
        layer.code.isEmpty ? "\(layer.name)" : "\(layer.name) (\(layer.code))"
    }

    static let keyFieldIDs: Set<FieldID> = [.errorCode, .status, .reason, .attRequestOpcode, .commandOpcode]

    /// A few fields that say why a message differs: an error code, a status.
    static func keyFields(_ layer: Layer) -> String {
        let wanted = layer.fields.filter { Self.keyFieldIDs.contains($0.id) }
        guard !wanted.isEmpty else { return "" }
        return " (" + wanted.map { "\($0.nameString): \(ValueText.describe($0.value))" }.joined(separator: ", ") + ")"
    }
}
