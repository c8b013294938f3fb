import BLECapture
import BLEProtocol

/// Scanning and advertising periods from the host's enable commands (Core v5.4 Vol 4 Part E
/// 7.8.9 / 7.8.11 / 7.8.56 / 7.8.65), as the session model decodes them (`HCICommand`):
/// `SessionModel.radio` while the HTML report's collector runs.
struct RadioTracker {
    private var open: [String: ReportExtras.RadioPeriod] = [:]
    private var done: [ReportExtras.RadioPeriod] = []
    static let maxPeriods = 2000

    mutating func enable(_ kind: ReportExtras.RadioPeriod.Kind, _ enabled: Bool, frame: Frame) {
        let key = "\(kind.rawValue)/\(frame.adapter)"
        if enabled {
            if open[key] == nil {
                open[key] = .init(kind: kind, adapter: frame.adapter, start: frame.timestamp, end: frame.timestamp, frame: frame.number)
            }
        } else if var period = open.removeValue(forKey: key), done.count < Self.maxPeriods {
            period.end = frame.timestamp
            done.append(period)
        }
    }

    mutating func finish(end: Int64) -> [ReportExtras.RadioPeriod] {
        for key in open.keys.sorted() {
            guard var period = open[key] else { continue }
            period.end = max(end, period.start)
            done.append(period)
        }
        open.removeAll()
        return done.sorted { ($0.start, $0.kind.rawValue) < ($1.start, $1.kind.rawValue) }
    }
}
