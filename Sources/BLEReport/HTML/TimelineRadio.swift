import BLEAnalysis

/// The host radio lane: connection attempts (top band), scanning with the advertising reports heard,
/// advertising. A phone log holds hundreds of attempts (BR/EDR pages, background auto-connect
/// through the filter accept list), so attempts of the same kind and outcome that touch on the
/// axis are drawn as one run, labelled once with their count ("Page Timeout ×40"), every attempt
/// of the run in its tooltip.
extension TimelineSVG {
    struct AttemptRun {
        var x0: Double
        var x1: Double
        var cls: String
        var outcome: String?
        var kind: String
        var attempts: [ConnectionAttempt]
    }

    /// Pixels between two attempts of a run.
    static let runGap = 4.0

    func attemptRuns(_ axis: TimeAxis) -> [AttemptRun] {
        var runs: [AttemptRun] = []
        for a in model.attempts.sorted(by: { ($0.time, $0.frame) < ($1.time, $1.frame) }) {
            let x0 = axis.x(a.time), x1 = max(axis.x(a.endTime ?? end), x0 + 3)
            let (cls, outcome): (String, String?)
            switch a.outcome {
            case .connected: (cls, outcome) = ("attempt-ok", nil)
            case let .failed(status): (cls, outcome) = ("attempt-failed", ReasonText.short(status))
            case .cancelled: (cls, outcome) = ("attempt-cancelled", nil)
            case .pending: (cls, outcome) = ("attempt-pending", "never completed")
            case .superseded: (cls, outcome) = ("attempt-superseded", nil)
            }
            let kind = !a.isLE ? "BR/EDR page" : a.usesFilterAcceptList ? "background auto-connect (filter accept list)" : "LE connection attempt"
            if let i = runs.indices.last(where: { runs[$0].cls == cls && runs[$0].outcome == outcome && runs[$0].kind == kind }),
               x0 <= runs[i].x1 + Self.runGap {
                runs[i].x1 = max(runs[i].x1, x1)
                runs[i].attempts.append(a)
            } else {
                runs.append(AttemptRun(x0: x0, x1: x1, cls: cls, outcome: outcome, kind: kind, attempts: [a]))
            }
        }
        return runs
    }

    /// Draws the lane at `g`; returns the label rows its labels use.
    func radioLane(_ axis: TimeAxis, _ out: inout SVGOut, _ g: LaneGeometry) -> Int {
        var labels = LabelPlacer(bounds: g.bounds)
        findingBands(nil, axis, &out, g)
        for r in extras.radio {
            let y = r.kind == .scanning ? g.barY + 14 : g.barY + 24
            out.span(axis.x(r.start), axis.x(r.end), y, 7, cls: "\(r.kind.rawValue)", min: 2,
                     title: "\(r.kind.rawValue) from frame \(r.frame), \(TimeFormat.duration(r.end - r.start))")
        }
        // Advertising reports heard, as ticks (each stands for `stride` reports).
        var lastX = -10.0
        for t in extras.advertisingReports.times {
            let x = axis.x(t)
            if x - lastX < 1.5 { continue }
            lastX = x
            out.at(x, g.barY + 13, "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"9\" class=\"advtick\"/>")
        }
        let runs = attemptRuns(axis)
        for run in runs {
            let n = run.attempts.count
            var tip = (n == 1 ? run.kind : "\(n) × \(run.kind)") + ", frames \(run.attempts[0].frame)–\(run.attempts[n - 1].frame)"
            let peers = Set(run.attempts.map { $0.peerAddress?.description ?? "filter accept list" }).sorted()
            tip += " to " + peers.prefix(4).joined(separator: ", ") + (peers.count > 4 ? " and \(peers.count - 4) more" : "")
            tip += ": " + ReportText.describe(run.attempts[0].outcome)
            out.span(run.x0, run.x1, g.barY + 1, 10, cls: run.cls, min: 3, title: tip)
            if run.outcome != nil {
                out.at(run.x1, g.barY + 6, "<path d=\"M-3,-3 L3,3 M3,-3 L-3,3\" class=\"xmark\"/>")
            }
        }
        var used = findingFlags(nil, axis, &out, g, &labels)
        // Failure labels, the largest runs first (a lone failure after a long run of them still gets
        // its label when there is room).
        out.onTop { out in
            for run in runs.enumerated().sorted(by: { ($1.1.attempts.count, $0.0) < ($0.1.attempts.count, $1.0) }).map(\.1) {
                guard let outcome = run.outcome else { continue }
                let text = outcome + (run.attempts.count > 1 ? " ×\(run.attempts.count)" : "")
                let spots = (0 ..< g.rows).flatMap { r in
                    [LabelSpot(x: run.x1 + 5, y: g.row(r)), LabelSpot(x: min(run.x1 - 5, labels.bounds.x1), y: g.row(r), anchorEnd: true)]
                }
                if let spot = labels.place(text, .markBold, spots) {
                    out.label(text, spot, cls: "faillabel")
                    used = max(used, (spots.firstIndex { $0.y == spot.y && $0.anchorEnd == spot.anchorEnd } ?? 0) / 2 + 1)
                }
            }
        }
        return max(used, 1)
    }
}
