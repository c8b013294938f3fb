/// Keeps a long session's memory flat (issue 32, docs/LIVE.md "Memory"): once more finished
/// connections are held than `SummaryPolicy.finishedConnections`, the oldest whose end is decided are
/// summarised. A connection is summarised when
/// - it has ended (a Disconnection Complete, or its handle reused) after a Connection Complete the
///   capture holds (an inferred link may be one of a filtered export's, whose rules read them all);
/// - the capture has gone `SessionModel.lostTogetherWindow` past its end, so the links lost with it
///   are known and its end is explained (`SessionModel.explainEnd`, as `explainEnds` would at the end);
/// - no pairing of it is still open (its timeout is decided at the end, `closeStalledPairings`);
/// - no detector keeps it (`Detector.keeps`: a finding of it still to decide or change).
/// Then every detector decides what it would of it at the end (`Detector.retire`), its findings are
/// linked and sealed (`DetectorEngine.retire`), those who watch the session hear of it
/// (`willSummarise`), and the model keeps its `ConnectionSummary` row (`SessionModel.summarise`).
///
/// The pass checks every 256 frames (by frame number), so `report FILE` and `live` on the same
/// bytes summarise the same connections at the same frames and end with the same report. Once over
/// the budget it summarises down to an eighth below it (and folds rows down to `rows` once they are an
/// eighth over), so a look over the connections held comes every hundred or so ends, not at each.
public final class ConnectionRetirement {
    let policy: SummaryPolicy
    /// Told before a connection is summarised (while the model still holds it): `live` tells its
    /// close and its decided findings.
    public var willSummarise: [(Connection) -> Void] = []
    /// Summarised links that were lost, while a link near them in time may still be explained.
    private var recentlyLost: [Connection] = []

    init(_ policy: SummaryPolicy) { self.policy = policy }

    /// Summarises what it may; `now` is the time of the last frame.
    func check(_ model: SessionModel, _ engine: DetectorEngine, now: Int64) {
        guard let keep = policy.finishedConnections, model.connections.count - model.live.count > keep else { return }
        let window = SessionModel.lostTogetherWindow
        // Ends past their window explained first (kept connections too: their companions may go).
        let lost = model.connections.filter { !$0.isOpen && $0.endedByLoss } + recentlyLost
        for c in model.connections where c.endCause == nil {
            guard let end = c.lifecycle.disconnectTime, c.lifecycle.disconnectFrame != nil, now > end + window else { continue }
            model.explainEnd(c, lostAmong: lost)
        }
        // Down to an eighth below the budget, so that the next few ends need no look (a look costs
        // the connections held).
        let target = keep - keep / 8
        var finished = model.connections.count - model.live.count
        var chosen: [Connection] = []
        for c in model.connections where finished - chosen.count > target {
            guard !c.isOpen, !c.lifecycle.inferred, c.lifecycle.completeFrame != nil, let end = c.lifecycle.disconnectTime,
                  now > end + window, !c.pairings.contains(where: { $0.outcome == .open }), !engine.keeps(c) else { continue }
            chosen.append(c)
        }
        for c in chosen {
            engine.retire(c, policy: policy) { c in for tell in self.willSummarise { tell(c) } }
            if c.endedByLoss { recentlyLost.append(c) }
            model.summarise(c)
            finished -= 1
        }
        if model.summarised.count - policy.rows > policy.rows / 8 { model.foldRows(keeping: policy.rows) }
        recentlyLost.removeAll { ($0.lifecycle.disconnectTime ?? 0) < now - 2 * window }
    }
}
