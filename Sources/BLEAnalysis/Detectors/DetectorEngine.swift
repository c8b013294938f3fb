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
        var findings = self.findings
        Causes.link(&findings, context.model)
        context.model.resolvePeerNames()
        Self.namePeers(&findings, context.model)
        return findings.sorted { a, b in
            if a.severity != b.severity { return a.severity > b.severity }
            if a.time != b.time { return a.time < b.time }
            return (a.frames.first ?? 0) < (b.frames.first ?? 0)
        }
    }

    /// Names each finding's peer as its connection is named now.
    static func namePeers(_ findings: inout [Finding], _ model: SessionModel) {
        let connections = model.connections
        for i in findings.indices {
            guard let n = findings[i].connectionIndex, n >= 1, n <= connections.count else { continue }
            let c = connections[n - 1]
            findings[i].peer = c.peerLabel
            findings[i].peerName = c.peerName
        }
    }
}
