/// When a finding is decided: the moment nothing later in the capture can change its rule, severity,
/// why (cause), connection or key evidence. `bleanalyze live` prints each finding then, not when the
/// session ends, and never one it would withdraw (docs/live-schema.json, docs/ARCHITECTURE.md "Live").
///
/// A finding about a connection is decided at the link's end, once the capture has gone
/// `SessionModel.lostTogetherWindow` past it (the links lost with it are known, so its
/// `link.disconnect`'s why is), when its rule is `decidedAtLinkEnd`: then `Causes.link` runs on that
/// connection's findings alone, as it will at the end (every link it makes but one is within a
/// connection; `pairing.failed`, folded across reconnects of one peer, waits for the end). An ATT
/// request that timed out (30 s) is decided with its link, whose end it explains; on a link that stays
/// open it is decided when the timer's window has passed (`timeoutsDecided`). Everything else —
/// findings about the capture as a whole, rules that decide or change findings when the pass ends
/// (`sessionEndRules`), a connection still open — is decided when the session ends.
///
/// The finding told is one occurrence as the final report will hold it: same rule, connection,
/// severity, why and key frame. Only folding at the end may add to it (a quality report that warned
/// of the loss, told in its `folded` and message), never take it away.
public final class DecidedFindings {
    /// Rules whose detector decides or changes findings of closed connections when the pass ends
    /// (their `finish` reads every connection), or folds findings across connections: their findings
    /// are decided when the session ends. A new rule whose `finish` touches a closed connection's
    /// findings belongs here (LiveDecisionTests checks the corpus).
    public static let sessionEndRules: Set<String> = Set([
        SlowResponse.rule, AdvertisingOversize.rule, DisconnectSummary.rule, CommandRefused.rule, CommandTimeout.rule,
        ConfigRefused.rule, LinkStallRule.rule, TruncatedNotification.rule, WriteWithResponse.rule,
        SmallMTU.rule, SmallDataLength.rule, StuckAttempt.rule, RepeatedPageTimeouts.rule,
        ConcurrentConnections.rule, ScanContention.rule, QualityReports.rule, PairingFailed.rule, RepeatedPairing.rule,
        InsufficientSecurity.rule, PairingTimeout.rule, LegacyPairing.rule, KeySizeDowngrade.rule, SubscriptionFailed.rule,
        JustWorksMITM.rule, SecureConnectionsDowngrade.rule,
    ].map(\.id))
    // Rules with a `finish` that reads only what is still open (decided at the disconnect for a closed
    // link) are not listed: att.timeout, att.indication-unconfirmed, att.server-stalled,
    // mtu.truncated-read, gatt.subscription-unanswered, gatt.subscription-silent,
    // gatt.unsubscribed-notification, pool.unresponsive-peer. security.just-works-mitm is listed: its
    // `finish` reads every connection's pairings (no event tells a pairing succeeded).

    public static func decidedAtLinkEnd(_ rule: String) -> Bool { !sessionEndRules.contains(rule) }

    private let analyzer: Analyzer
    private var model: SessionModel { analyzer.session }
    /// Connections seen (their indexes up to `known`), those not yet decided (open, or closed less
    /// than the window ago), and links lost within the window (the companions of a loss).
    private var known = 0
    private var undecided: [Connection] = []
    /// Findings decided when their connection was summarised, told at the next `poll`.
    private var early: [Finding] = []
    private var recentlyLost: [Connection] = []
    /// The undecided connections' findings (indexes in the engine's `findings`), read up to `read`.
    private var pending: [Int: [Int]] = [:]
    private var read = 0
    /// Connections decided (findings told): a finding of a link-end rule that comes for one later
    /// would have been decided too early. Connections whose findings wait for the session's end.
    private var decided = Set<Int>()
    private var deferred = Set<Int>()
    /// Requests (their frames) whose `att.timeout` was told while their link was open.
    private var toldTimeouts = Set<Int>()
    /// Findings of link-end rules added for a connection after it was decided (none unless a rule
    /// belongs in `sessionEndRules`).
    public private(set) var lateFindings: [Finding] = []

    public init(_ analyzer: Analyzer) {
        self.analyzer = analyzer
        analyzer.retirement?.willSummarise.append { [unowned self] c in self.summarising(c) }
        analyzer.engine?.movedObservers.append { [unowned self] moves in
            self.read = moves(self.read)
            self.pending = self.pending.mapValues { $0.map(moves.callAsFunction) }
        }
    }

    /// `c` is about to be summarised (its window has passed, `ConnectionRetirement`): its findings
    /// are decided now, while the engine still holds them where they were made.
    private func summarising(_ c: Connection) {
        guard let engine = analyzer.engine else { return }
        learn(engine.findings)
        undecided.removeAll { $0 === c }
        // Its findings leave `engine.findings` now: none can come for it later.
        defer { decided.remove(c.index) }
        guard !decided.contains(c.index), !deferred.contains(c.index) else { return }
        if c.endedByLoss, !recentlyLost.contains(where: { $0 === c }) { recentlyLost.append(c) }
        early += decide(c, engine.findings)
    }

    /// New connections and findings since the last look.
    private func learn(_ all: [Finding]) {
        for c in model.connections.reversed().prefix(while: { $0.index > known }).reversed() { undecided.append(c) }
        known = max(known, model.connections.last?.index ?? 0)
        while read < all.count {
            if let n = all[read].connectionIndex {
                if decided.contains(n) {
                    if Self.decidedAtLinkEnd(all[read].rule) { lateFindings.append(all[read]) }
                } else if !deferred.contains(n) {
                    pending[n, default: []].append(read)
                }
            }
            read += 1
        }
    }

    /// The findings decided since the last call, in the order of their links' ends. Call it as
    /// often as suits (after each read); it costs the connections not yet decided and the new findings.
    /// - Parameter clock: where the capture is at least, when its times are the wall clock's (a proxy,
    ///   the monitor channel: a frame that comes later is stamped later), so a link's window closes
    ///   while nothing comes; nil: the last frame's time.
    public func poll(clock: Int64? = nil) -> [Finding] {
        guard let engine = analyzer.engine else { return [] }
        let all = engine.findings
        learn(all)
        let now = max(analyzer.now, clock ?? .min)
        recentlyLost.removeAll { ($0.lifecycle.disconnectTime ?? 0) < now - 2 * SessionModel.lostTogetherWindow }
        var told: [Finding] = early
        early = []
        var still: [Connection] = []
        for c in undecided {
            guard let end = c.lifecycle.disconnectTime, c.lifecycle.disconnectFrame != nil else {
                told += timeoutsDecided(c, now: now)
                still.append(c)
                continue
            }
            if c.endedByLoss, !recentlyLost.contains(where: { $0 === c }) { recentlyLost.append(c) }
            guard now > end + SessionModel.lostTogetherWindow else { still.append(c); continue }
            told += decide(c, all)
        }
        undecided = still
        return told
    }

    /// The `att.timeout` of each request on the open link `c` that has waited past its timer and the
    /// window in which the link's end would be blamed on it (`SessionModel.explain`: 30 s, Core v5.4
    /// Vol 3 Part F 3.3.3, + `timerWindow`): whenever the link ends now, or if it never
    /// does, the report holds this finding with this why (the request's own timeout, not the link's
    /// end). Decided only where nothing can take it back: an HCI link with its Connection Complete (no
    /// sniffer loss can hide the response, no handle reuse can end it at its last data). A response
    /// that still comes (a server answering a dead bearer) changes only its message's tail.
    private func timeoutsDecided(_ c: Connection, now: Int64) -> [Finding] {
        guard !c.lifecycle.inferred, analyzer.air.links.isEmpty else { return [] }
        let window = OutstandingRequests.transactionTimeout + SessionModel.timerWindow
        var findings: [Finding] = []
        for p in c.att.allOutstanding where now - p.time > window && !toldTimeouts.contains(p.frame) {
            // The host's Disconnect is where the link's end is timed (its completion may come later).
            if let d = c.forensics.localDisconnect, d.time - p.time <= window { continue }
            toldTimeouts.insert(p.frame)
            findings.append(ATTTimeout.finding(c, p, after: nil))
        }
        guard !findings.isEmpty else { return [] }
        Causes.link(&findings, model)
        DetectorEngine.namePeers(&findings, model)
        return findings
    }

    /// The connection's findings as the end of the pass will link them; those of link-end rules are told.
    private func decide(_ c: Connection, _ all: [Finding]) -> [Finding] {
        let mine = pending.removeValue(forKey: c.index) ?? []
        // A pairing still open when the link ended is closed (timed out or not) when the pass ends,
        // and its pairing.security-timeout may take the disconnect in: wait for the end.
        if c.pairings.contains(where: { $0.outcome == .open }) { deferred.insert(c.index); return [] }
        decided.insert(c.index)
        model.explainEnd(c, lostAmong: recentlyLost)
        var findings = mine.map { all[$0] }
        if !toldTimeouts.isEmpty {
            findings.removeAll { $0.rule == ATTTimeout.rule.id && toldTimeouts.contains($0.frames.first ?? -1) }
        }
        guard !findings.isEmpty else { return [] }
        Causes.link(&findings, model)
        DetectorEngine.namePeers(&findings, model)
        return findings.filter { f in
            guard Self.decidedAtLinkEnd(f.rule) else { return false }
            // The disconnect of a pairing that timed out is folded into its pairing.security-timeout at the end.
            if f.rule == Disconnects.rule.id, c.endCause?.cause.kind == .smpTimeout { return false }
            return true
        }
    }
}
