import BLEProtocol

/// How much a finding matters: `warning`/`error` = the developer must act; `info` = a fact worth knowing.
public enum Severity: String, Sendable, Comparable, CaseIterable {
    case info, warning, error

    var rank: Int { switch self { case .info: 0; case .warning: 1; case .error: 2 } }
    public static func < (a: Severity, b: Severity) -> Bool { a.rank < b.rank }
}

/// Who has to act on a finding: the advice names them, so a reader knows whose bug it is.
public enum Actor: String, Sendable, CaseIterable {
    /// The phone or desktop application (CoreBluetooth / android.bluetooth client or server code).
    case app
    /// The accessory's firmware (the peer device).
    case peripheralFirmware = "peripheral firmware"
    /// The phone's operating system or host Bluetooth stack (bluetoothd, Fluoride/Gabeldorsche, BlueZ).
    case hostStack = "host stack"
    /// The Bluetooth controller (its firmware).
    case controller
    /// The person using the phone (remove stale bonds, move closer).
    case user
    /// Nobody: a fact, or a problem this log cannot attribute.
    case none

    /// "the app", "the peripheral firmware"…
    public var phrase: String { self == .none ? "nobody" : "the " + rawValue }
}

/// A problem (or fact) found in a capture, with the frames that prove it.
public struct Finding: Sendable {
    /// The rule id, e.g. `mtu.truncated-read` (docs/RULES.md).
    public var rule: String
    public var severity: Severity
    /// HCI connection handle, nil for capture-wide findings.
    public var connection: UInt16?
    /// 1-based connection number in the report, when the finding is about one connection.
    public var connectionIndex: Int?
    /// µs since the Unix epoch: when it happened (the key evidence frame's time).
    public var time: Int64
    /// Evidence frame numbers; the first is the key one.
    public var frames: [Int]
    /// The sentence, with the peer as a typed part (renderers name the peer as `peer` says).
    public var message: FindingMessage
    /// Who must act (defaults to the rule's; a rule that knows the roles sets it per finding).
    public var actor: Actor
    /// The peer, as the report names it: advertised or GAP name and address ("NOVA_O38 (14:32:…)"),
    /// filled when the pass ends (names may be learnt after the finding).
    public var peer: String?
    /// The peer's name (advertised or GAP), filled when the pass ends; nil when only its address is known.
    public var peerName: String?
    /// Host log lines (PacketLogger syslog: bluetoothd, CoreBluetooth) logged just before the
    /// finding on its connection, with how long before: "the app logged X 3 ms before the stall".
    public var logContext: [String] = []
    /// Why it happened: the evidence that explains this consequence (`Causes.link`, at the end of the
    /// pass), nil when the rule states a cause itself or has none to give.
    public var cause: FindingCause?
    /// Structured facts, so a CI script never parses `message`: the attribute handle concerned,
    /// the characteristic's UUID when discovery showed it, and the protocol status code (ATT error,
    /// HCI status/reason or SMP reason, as the rule says).
    public var handle: UInt16?
    public var uuid: BluetoothUUID?
    public var status: UInt8?
    /// Other findings folded into this one (one problem, one finding), by rule in the order first
    /// folded: each with the key evidence frame of every finding folded (so a CI user finds them).
    public var folded: [Folded] = []
    public struct Folded: Sendable, Equatable {
        public var rule: String
        /// The key frame of each folded finding, in capture order (at most `Finding.maxFoldedFrames`).
        public var frames: [Int]
        /// How many findings were folded, also past the frames kept.
        public var count: Int
        public init(rule: String, frames: [Int], count: Int? = nil) {
            (self.rule, self.frames, self.count) = (rule, frames, count ?? frames.count)
        }
    }

    /// Folds `other` into this finding, with what had been folded into it.
    mutating func fold(_ other: Finding) {
        fold(rule: other.rule, frames: [other.frames.first ?? 0], count: 1)
        for f in other.folded { fold(rule: f.rule, frames: f.frames, count: f.count) }
    }

    mutating func fold(rule: String, frame: Int) { fold(rule: rule, frames: [frame], count: 1) }

    private mutating func fold(rule: String, frames: [Int], count: Int) {
        guard let i = folded.firstIndex(where: { $0.rule == rule }) else {
            folded.append(Folded(rule: rule, frames: Array(frames.prefix(Self.maxFoldedFrames)), count: count))
            return
        }
        folded[i].count += count
        let room = Self.maxFoldedFrames - folded[i].frames.count
        if room > 0 { folded[i].frames.append(contentsOf: frames.prefix(room)); folded[i].frames.sort() }
    }
    static let maxFoldedFrames = 256

    public init(rule: String, severity: Severity, connection: Connection?, time: Int64, frames: [Int], message: FindingMessage,
                actor: Actor? = nil) {
        self.rule = rule
        self.severity = severity
        self.actor = actor ?? Rules.defaultActor(rule)
        self.connection = connection?.handle
        self.connectionIndex = connection?.index
        self.time = time
        self.frames = frames
        self.message = message
    }
}

/// What a rule is, for `bleanalyze rules` and the report's advice.
public struct RuleInfo: Sendable {
    public struct Threshold: Sendable {
        public var name: String
        /// Default value, in `unit`.
        public var defaultValue: Double
        public var unit: String
        public var meaning: String
    }
    public var id: String
    public var severity: Severity
    public var title: String
    /// One paragraph for iOS and Android developers: what it means and what to change.
    public var explanation: String
    public var thresholds: [Threshold]
    /// Who usually has to act on this rule's findings.
    public var actor: Actor
    /// The rule's row in docs/RULES.md, which is generated from it (`bleanalyze rules --markdown`,
    /// `make rules-doc`; `RulesTableTests` fails when the file is stale): a rule is documented where
    /// it is written.
    public var doc: Doc

    /// A rule-table row's text (Markdown).
    public struct Doc: Sendable {
        /// The severity column when it says more than the severity ("warning (info if …)"); nil: the severity.
        public var severity: String?
        /// When the rule fires: what the frames show, thresholds, what keeps it quiet.
        public var firesWhen: String
        /// The evidence frames it lists, the key one first.
        public var evidence: String

        public init(severity: String? = nil, firesWhen: String, evidence: String) {
            (self.severity, self.firesWhen, self.evidence) = (severity, firesWhen, evidence)
        }
    }

    public init(id: String, severity: Severity, title: String, explanation: String, thresholds: [Threshold] = [],
                actor: Actor = .app, doc: Doc) {
        (self.id, self.severity, self.title, self.explanation, self.thresholds) = (id, severity, title, explanation, thresholds)
        (self.actor, self.doc) = (actor, doc)
    }
}

/// Rules switched off and thresholds overridden from the command line (`--rule ID=off`,
/// `--rule ID.NAME=VALUE`).
public struct RuleConfiguration: Sendable {
    public var disabled: Set<String> = []
    public var thresholds: [String: Double] = [:]
    /// How many finished connections stay whole (`SummaryPolicy`, `--keep-connections`).
    public var summary = SummaryPolicy()

    public init() {}

    /// Parses one `--rule` argument; returns an error message for a bad one.
    public mutating func apply(_ argument: String, known: [RuleInfo]) -> String? {
        guard let eq = argument.firstIndex(of: "=") else { return "expected ID=off or ID.NAME=VALUE, got \(argument)" }
        let key = String(argument[..<eq]), value = String(argument[argument.index(after: eq)...])
        if value == "off" {
            guard known.contains(where: { $0.id == key || $0.id.hasPrefix(key + ".") || key.hasSuffix("*") && $0.id.hasPrefix(String(key.dropLast())) })
            else { return "unknown rule \(key)" }
            disabled.insert(key)
            return nil
        }
        guard let v = Double(value) else { return "threshold \(key) needs a number, got \(value)" }
        let known = known.flatMap { r in r.thresholds.map { r.id + "." + $0.name } }
        guard known.contains(key) else { return "unknown threshold \(key) (see `bleanalyze rules`)" }
        thresholds[key] = v
        return nil
    }

    public func isEnabled(_ id: String) -> Bool {
        if disabled.contains(id) { return false }
        // A family can be switched off at once: `--rule pool=off`, `--rule gatt.subscription*=off`.
        for d in disabled where id.hasPrefix(d + ".") || (d.hasSuffix("*") && id.hasPrefix(String(d.dropLast()))) { return false }
        return true
    }

    /// Rules ask at every disconnect (~6 per connection): without `--rule` thresholds the key String
    /// is not built (~800 instructions a call).
    public func threshold(_ rule: RuleInfo, _ name: String) -> Double {
        let configured = thresholds.isEmpty ? nil : thresholds[rule.id + "." + name]
        return configured ?? rule.thresholds.first { $0.name == name }?.defaultValue ?? 0
    }
}

/// Why a consequence happened, from the frames: a disconnect, an ATT timeout, a pairing failure, a
/// refused procedure linked to the evidence that explains it (docs/RULES.md "Causes").
public struct FindingCause: Sendable {
    /// What kind of cause; the spellings are part of the JSON interface (docs/RULES.md).
    public enum Kind: String, Sendable, CaseIterable {
        /// The peer was heard advertising (connectable) after its last packet while the link was open: it reset or left.
        case peerReset = "peer-reset"
        /// Nothing from the peer for the supervision timeout, and nothing else in the capture explains it.
        case peerSilent = "peer-silent"
        /// A supervision timeout too short for the interval and latency, or parameters changed just before the loss.
        case parameters
        /// An ATT request or indication unanswered for 30 s (Core v5.4 Vol 3 Part F 3.3.3).
        case attTimeout = "att-timeout"
        /// A pairing that stalled for SMP's 30 s (Core v5.4 Vol 3 Part H 3.4).
        case smpTimeout = "smp-timeout"
        /// An LL procedure that timed out or collided (0x22, 0x23, 0x28, 0x2A) with a host procedure pending.
        case llProcedure = "ll-procedure"
        case micFailure = "mic-failure"
        /// PIN or Key Missing (0x06): the peer no longer has the bond.
        case keyMissing = "key-missing"
        /// The host sent HCI Disconnect: the app or the OS asked for it.
        case localRequest = "local-request"
        /// The peer terminated the link.
        case peerRequest = "peer-request"
        /// Several links lost within the same second: the phone's side (its controller or radio).
        case phoneSide = "phone-side"
        /// The link failed to be established (0x3E).
        case establishment
        /// This finding is itself a consequence of a link loss.
        case linkLoss = "link-loss"
        /// A consequence of a pairing outcome (rejected, wrong passkey, timeout, given up).
        case pairing
        /// The controller refused the procedure.
        case controllerRefused = "controller-refused"
        /// The host's own radio use (scanning) took the link's radio time (`radio.scan-contention`).
        case radioContention = "radio-contention"
        /// The controller's own link-quality report (Android's Bluetooth Quality Report) explains it.
        case linkQuality = "link-quality"
        /// The capture holds no cause; the text says what was checked.
        case none
    }
    public var kind: Kind
    /// Evidence, the key frame first.
    public var frames: [Int]
    public var text: FindingMessage

    public init(_ kind: Kind, frames: [Int], _ text: FindingMessage) {
        (self.kind, self.frames, self.text) = (kind, frames, text)
    }
}
