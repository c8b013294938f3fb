import BLEAnalysis
import BLEBytes

/// Connection attempts that did not connect, as a person wants them: the OS's background activity
/// (auto-connect through the filter accept list, BR/EDR pages) one line per kind with counts, and
/// the attempts to one LE device one by one. The text report and the HTML report format this; how
/// many attempts each shows (and whether to point at `--all`) is theirs.
struct BackgroundActivity {
    /// Auto-connect attempts through the filter accept list: count, outcomes with counts, first frame.
    var autoConnectLine: String?
    /// BR/EDR pages (Create Connection): count, devices, outcomes with counts.
    var pagesLine: String?
    /// LE attempts to one device that did not connect, in capture order.
    var direct: [ConnectionAttempt]

    init(_ model: SessionModel) {
        let acceptList = model.attempts.filter { $0.isLE && $0.usesFilterAcceptList }
        if !acceptList.isEmpty {
            autoConnectLine = "Background auto-connect (filter accept list): " + ReportText.plural(acceptList.count, "attempt") + " — "
                + Self.outcomes(acceptList) + (acceptList.count > 1 ? "; first at frame \(acceptList[0].frame)" : "")
        }
        let pages = model.attempts.filter { !$0.isLE }
        if !pages.isEmpty {
            let devices = Set(pages.compactMap(\.peerAddress)).count
            pagesLine = "BR/EDR pages (Create Connection): " + ReportText.plural(pages.count, "page") + " to "
                + ReportText.plural(devices, "device") + " — " + Self.outcomes(pages)
        }
        direct = ReportText.failedAttempts(model).filter { $0.isLE && !$0.usesFilterAcceptList }
    }

    /// "3 failed (…), 1 cancelled by the host", most frequent first.
    static func outcomes(_ attempts: [ConnectionAttempt]) -> String {
        var counts: [String: Int] = [:]
        for a in attempts { counts[ReportText.shortOutcome(a.outcome), default: 0] += 1 }
        return counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
    }

    /// One LE attempt to a device.
    static func line(_ a: ConnectionAttempt) -> String {
        "LE attempt at frame \(a.frame) to \(a.peerAddress?.description ?? "?"): " + ReportText.describe(a.outcome)
            + (a.endFrame.map { " (frame \($0))" } ?? "")
    }
}
