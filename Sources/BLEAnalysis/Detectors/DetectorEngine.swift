/// Routes session events to the detectors that asked for their kind and collects findings.
/// Detectors are called once per *event*, never per frame, and ACL-level events reach only the
/// flow-control rules.
public final class DetectorEngine {
    /// `let` stored properties: the hot path borrows them instead of retaining each per call.
    /// The detectors of each kind, one after the other: kind k's are `routed[routeStart[2k] ..< routeStart[2k + 2]]`,
    /// those that want it only on demand (`Detector.onDemand`) from `routeStart[2k + 1]`, called only while
    /// one of them asks for it (a credit return is wanted always by `flow.skipped-ready`, by the radio
    /// contention rules only after a hit).
    /// One flat array: taking the kind's own array out of an array of arrays retained and released
    /// it per event (1 M pairs on the 1M-frame writes bench). Each detector is called through a
    /// `Route` borrowed with `Unmanaged._withUnsafeGuaranteedRef`: an existential read out of an
    /// array (or through `unowned(unsafe)`) was retained and released around every call (2.6 M
    /// pairs, ~3 %). Safe: `routeOwners` holds every `Route` strongly, each `Route` its detector, and
    /// both are `let`s of this engine, which outlives every `emit`.
    private let routed: [Unmanaged<Route>]
    private let routeOwners: [Route]
    private let routeStart: [Int]
    private final class Route {
        let detector: any Detector
        init(_ detector: any Detector) { self.detector = detector }
    }
    @exclusivity(unchecked) public private(set) var findings: [Finding] = []
    let context: DetectorContext
    private let detectors: [any Detector]

    public init(model: SessionModel, configuration: RuleConfiguration) {
        context = DetectorContext(model: model, configuration: configuration)
        detectors = Rules.all.filter { configuration.isEnabled($0.rule.id) }.map { $0.make() }
        // Per kind: the detectors that want it always, then those that want it on demand.
        var routes = [[any Detector]](repeating: [], count: 2 * SessionEvent.Kind.allCases.count)
        var wanted: UInt64 = 0
        for d in detectors {
            for k in d.kinds {
                let always = !d.onDemand.contains(k)
                routes[2 * k.rawValue + (always ? 0 : 1)].append(d)
                if always { wanted |= 1 << k.rawValue }
            }
        }
        routeOwners = routes.flatMap { $0 }.map(Route.init)
        routed = routeOwners.map { Unmanaged.passUnretained($0) }
        routeStart = routes.reduce(into: [0]) { starts, list in starts.append(starts[starts.count - 1] + list.count) }
        self.wanted = wanted
    }

    /// True when some detector wants events of `kind` (the model skips building the others): always,
    /// or now (`DetectorContext.demand`).
    @inline(__always)
    public func wants(_ kind: SessionEvent.Kind) -> Bool {
        wanted & (1 << kind.rawValue) != 0 || context.demanded & (1 << kind.rawValue) != 0
    }
    /// Bit k set: some detector wants kind k always, not only on demand (a bit test per event, no array access).
    private let wanted: UInt64

    /// Hands `event` to the detectors of `kind` (the model names the kind: a notification may be
    /// routed as the first of its handle and again as a full-MTU value).
    public func emit(_ kind: SessionEvent.Kind, _ event: SessionEvent) {
        let k = kind.rawValue
        let demanded = context.demanded & (1 << k) != 0
        routeStart.withUnsafeBufferPointer { starts in
            routed.withUnsafeBufferPointer { list in
                var i = starts[2 * k]
                let end = starts[demanded ? 2 * k + 2 : 2 * k + 1]
                while i < end {
                    list[i]._withUnsafeGuaranteedRef { $0.detector.observe(event, context, &findings) }
                    i += 1
                }
            }
        }
    }

    /// Ends the pass: lets every detector report what is still open, then orders the findings
    /// by severity (errors first) and time.
    public func finish(captureEnd: Int64, lastFrame: Int) -> [Finding] {
        context.captureEnd = captureEnd
        context.lastFrame = lastFrame
        for d in detectors { d.finish(context, &findings) }
        // Linked and folded on a copy: `findings` keeps growing only (the HTML report's collector
        // reads what was added since it last looked).
        var findings = sealed.isEmpty ? self.findings : self.findings.filter { !$0.rule.isEmpty } + sealed
        Causes.link(&findings, context.model)
        context.model.resolvePeerNames()
        Self.namePeers(&findings, context.model)
        return findings.sorted { a, b in
            if a.severity != b.severity { return a.severity > b.severity }
            if a.time != b.time { return a.time < b.time }
            return (a.frames.first ?? 0) < (b.frames.first ?? 0)
        }
    }

    /// Names each finding's peer as its connection (or its summary) is named now.
    static func namePeers(_ findings: inout [Finding], _ model: SessionModel) {
        for i in findings.indices {
            guard let n = findings[i].connectionIndex else { continue }
            if let c = model.connection(n) {
                findings[i].peer = c.peerLabel
                findings[i].peerName = c.peerName
            } else if let s = model.summary(n) {
                findings[i].peer = s.peerLabel
                findings[i].peerName = s.peerName
            }
        }
    }

    // MARK: Summarised connections (`ConnectionRetirement`)

    /// Whether some detector still needs the finished connection `c` whole at the end.
    func keeps(_ c: Connection) -> Bool { detectors.contains { $0.keeps(c, context) } }

    /// Summarises `c`'s findings, before the model lets `c` go: every detector decides what it would
    /// decide of `c` at the end (`Detector.retire`); then `c`'s findings are linked to their causes as
    /// the end would link them (every link `Causes` makes but `pairing.failed`'s across reconnects is
    /// within a connection, and a connection with a pairing failure is kept), named, and moved to
    /// `sealed`: their places in `findings` hold an empty finding (rule ""), so the indexes detectors
    /// and `DecidedFindings` hold stay right until `compact` gives them back. `tell` hears of `c`
    /// between the two (`ConnectionRetirement.willSummarise`). Past `policy.infoFindingsPerRule` info
    /// findings of a rule on summarised connections the rest are counted (`summarisedInfo`), not
    /// kept; past `policy.problemsPerRule` warnings and errors too (`summarisedProblems`).
    func retire(_ c: Connection, policy: SummaryPolicy, telling tell: (Connection) -> Void) {
        for d in detectors { d.retire(c, context, &findings) }
        tell(c)
        indexFindings()
        guard let places = positions.removeValue(forKey: c.index) else { return }
        var mine = places.map { findings[$0] }
        for p in places { findings[p] = Self.vacated }
        vacated += places.count
        Causes.link(&mine, context.model)
        Self.namePeers(&mine, context.model)
        for f in mine {
            let info = f.severity == .info
            let kept = (info ? sealedInfo : sealedProblems)[f.rule, default: 0]
            guard kept < (info ? policy.infoFindingsPerRule : policy.problemsPerRule) else {
                if info { summarisedInfo[f.rule, default: 0] += 1 } else { summarisedProblems[f.rule, default: 0] += 1 }
                continue
            }
            if info { sealedInfo[f.rule] = kept + 1 } else { sealedProblems[f.rule] = kept + 1 }
            sealed.append(f)
        }
        if vacated >= policy.compactAfter, vacated * 2 >= findings.count { compact() }
    }

    /// Gives back the places of summarised connections' findings: `findings` keeps the others, in
    /// order, and every holder of an index moves it (the detectors, `positions`, `movedObservers`:
    /// `DecidedFindings`, the HTML report's collector).
    private func compact() {
        let moves = FindingMoves(vacated: findings.indices.filter { findings[$0].rule.isEmpty })
        findings.removeAll { $0.rule.isEmpty }
        removed += moves.count
        vacated = 0
        for d in detectors { d.findingsMoved(moves) }
        positions = positions.mapValues { $0.map(moves.callAsFunction) }
        indexed = moves(indexed)
        for tell in movedObservers { tell(moves) }
    }
    /// Told when `findings` is compacted.
    public var movedObservers: [(FindingMoves) -> Void] = []
    /// Findings made so far, summarised or not (`findings.count` drops when it is compacted).
    public var made: Int { findings.count + removed }

    /// How much of a long session stays whole and listed.
    public var summaryPolicy: SummaryPolicy { context.configuration.summary }

    /// Findings of summarised connections, linked and named when they were summarised.
    @exclusivity(unchecked) public private(set) var sealed: [Finding] = []
    /// Per rule: info findings of summarised connections kept in `sealed`, and those only counted;
    /// the same of warnings and errors.
    private var sealedInfo: [String: Int] = [:]
    public private(set) var summarisedInfo: [String: Int] = [:]
    private var sealedProblems: [String: Int] = [:]
    public private(set) var summarisedProblems: [String: Int] = [:]
    /// Per connection still held: the indexes of its findings in `findings`, read up to `indexed`.
    private var positions: [Int: [Int]] = [:]
    private var indexed = 0
    /// Empty places in `findings`, and those given back so far.
    private var vacated = 0
    private var removed = 0
    private func indexFindings() {
        while indexed < findings.count {
            if let n = findings[indexed].connectionIndex { positions[n, default: []].append(indexed) }
            indexed += 1
        }
    }
    /// What a summarised connection's finding leaves in `findings`.
    static let vacated = Finding(rule: "", severity: .info, connection: nil, time: 0, frames: [], message: "")
}

/// How `DetectorEngine.compact` moved the findings: each kept finding's index drops by the empty
/// places before it.
public struct FindingMoves: Sendable {
    /// The empty places given back, in order.
    let vacated: [Int]
    var count: Int { vacated.count }
    /// The new index of the kept finding at `i`, and the new place of a reading position at `i`
    /// (everything before it read): `i` less the empty places before it.
    public func callAsFunction(_ i: Int) -> Int { i - vacated.prefixEnd { $0 < i } }
}
