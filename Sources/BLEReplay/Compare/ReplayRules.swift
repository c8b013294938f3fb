import BLEProtocol

/// The relaxations replay and emulate apply when comparing a live packet with the recorded one:
/// what legitimately differs between two runs or two controllers. Each has an id; relaxations
/// that are on by default are turned off with `--strict ID` (or `--strict all`), the others are
/// turned on with `--ignore ID`. docs/REPLAY.md lists them with examples.
public struct ReplayRule: Sendable, Equatable {
    public let id: String
    public let summary: String
    /// On unless `--strict`.
    public let relaxedByDefault: Bool
}

public enum ReplayRules {
    public static let rssi = "rssi"
    public static let vendor = "vendor"
    public static let advertising = "advertising"
    public static let localAddress = "local-address"
    public static let connectionInterval = "conn-interval"
    public static let controllerInfo = "controller-info"
    public static let flowControl = "flow-control"
    public static let linkLayerEvents = "ll-events"
    public static let eventVariant = "event-variant"
    public static let smpRandom = "smp-random"
    public static let unexpected = "unexpected"
    public static let attValue = "att-value"
    public static let environment = "environment"
    public static let linkLoss = "link-loss"
    public static let configuration = "configuration"
    /// Controller configuration no packet of a session depends on, and that a live controller need
    /// not take: the RF path's gain and loss, for TX power reporting (Core v5.4 Vol 4 Part E
    /// 7.8.74–7.8.75); the LE Ping timer (7.3.93–7.3.94: only an Authenticated Payload Timeout
    /// Expired event, which no recording here has, depends on it); the host's channel
    /// classification (7.3.46, 7.8.19: a hint for adaptive frequency hopping). RootCanal 1.10.0
    /// lists each as supported and aborts when it gets one.
    static let unneededConfiguration: Set<UInt16> = Set([
        HCIOpcode.leReadRFPathCompensation, .leWriteRFPathCompensation, .readAuthenticatedPayloadTimeout,
        .writeAuthenticatedPayloadTimeout, .setAFHHostChannelClassification, .leSetHostChannelClassification,
    ].map(\.rawValue))
    /// The radio's reasons a link ends (Core v5.4 Vol 1 Part F): Connection Timeout (0x08), LL
    /// Response Timeout (0x22), Connection Failed to be Established / Synchronization Timeout (0x3E).
    static let linkLossReasons: Set<UInt64> = Set([HCIStatus.connectionTimeout, .llResponseTimeout, .connectionFailedToBeEstablished].map { UInt64($0.rawValue) })

    public static let all: [ReplayRule] = [
        ReplayRule(id: rssi, summary: "RSSI values are not compared", relaxedByDefault: true),
        ReplayRule(id: vendor, summary: "vendor commands (OGF 0x3F) are not sent and their answers not compared; vendor-specific events (0xFF, and event codes the spec does not assign) and ACL on Android's vendor handle 0x0EDC or on a handle above 0x0EFF (no connection's) are neither sent, expected nor unexpected", relaxedByDefault: true),
        ReplayRule(id: advertising, summary: "advertising reports are compared as a set of (advertiser, event type, data): order, count and other advertisers are ignored", relaxedByDefault: true),
        ReplayRule(id: localAddress, summary: "the controller's own addresses (Read BD_ADDR, local resolvable private addresses, LE Set Random Address) and the peer's resolvable private address of an LE Enhanced Connection Complete (random by design) are not compared", relaxedByDefault: true),
        ReplayRule(id: connectionInterval, summary: "a connection interval anywhere in the range the host requested is accepted", relaxedByDefault: true),
        ReplayRule(id: controllerInfo, summary: "return values describing the controller (version, features, supported commands, buffer and list sizes, data lengths, TX power, clock accuracy, LE Rand) are not compared; their Status is", relaxedByDefault: true),
        ReplayRule(id: flowControl, summary: "Num_HCI_Command_Packets and Number Of Completed Packets are used for flow control, not compared", relaxedByDefault: true),
        ReplayRule(id: linkLayerEvents, summary: "controller-initiated LE Data Length Change, LE PHY Update Complete and LE Channel Selection Algorithm events are optional", relaxedByDefault: true),
        ReplayRule(id: eventVariant, summary: "LE Connection Complete and LE Enhanced Connection Complete (v1, v2) match each other on their common fields", relaxedByDefault: true),
        ReplayRule(id: smpRandom, summary: "SMP random values and keys (confirm, random, public key, DHKey check, distributed keys, LTK/EDIV/Rand in HCI) are not compared", relaxedByDefault: true),
        ReplayRule(id: unexpected, summary: "packets the recording does not have are not divergences", relaxedByDefault: false),
        ReplayRule(id: attValue, summary: "ATT attribute values are not compared (opcodes, handles and error codes still are)", relaxedByDefault: false),
        ReplayRule(id: linkLoss, summary: "a recorded link loss (Disconnection Complete with Connection Timeout 0x08, LL Response Timeout 0x22 or Connection Failed to be Established 0x3E) accepts any live reason, and an Encryption Change with such a Status any outcome: a live peer, a twin, ends the link itself", relaxedByDefault: true),
        ReplayRule(id: configuration, summary: "controller configuration no session depends on (LE Read/Write RF Path Compensation, Read/Write Authenticated Payload Timeout, the host's channel classification) is not sent; its answer is not compared", relaxedByDefault: true),
        ReplayRule(id: environment, summary: "divergences in the controller's own traffic (vendor commands, version, features, codecs, buffer sizes, power-on events, configuration answers, advertising) are listed once and do not fail the run", relaxedByDefault: true),
    ]
}

/// Which relaxations are on for one run.
public struct RuleSet: Sendable, Equatable {
    public private(set) var relaxed: Set<String>

    /// The defaults.
    public init() { relaxed = Set(ReplayRules.all.filter(\.relaxedByDefault).map(\.id)) }

    /// The defaults, then `strict` turned off and `ignore` turned on (`all` names every rule).
    /// - Throws: `RuleError` naming an unknown id.
    public init(ignore: [String], strict: [String]) throws(RuleError) {
        self.init()
        let known = Set(ReplayRules.all.map(\.id))
        for id in strict {
            if id == "all" { relaxed.removeAll(); continue }
            guard known.contains(id) else { throw RuleError(id: id) }
            relaxed.remove(id)
        }
        for id in ignore {
            if id == "all" { relaxed = known; continue }
            guard known.contains(id) else { throw RuleError(id: id) }
            relaxed.insert(id)
        }
    }

    public func isRelaxed(_ id: String) -> Bool { relaxed.contains(id) }
}

public struct RuleError: Error, Sendable, CustomStringConvertible {
    public let id: String
    public var description: String {
        "unknown rule \"\(id)\": use one of \(ReplayRules.all.map(\.id).joined(separator: ", ")) or all"
    }
}
