import BLEAnalysis

/// How much of a capture the HTML page shows one by one. A capture of a few dozen connections (every
/// capture of the corpus) gets a section per connection and a lane per peer, as it always has; past
/// `maxSections` connections the page is *summarised*: every connection is counted in a table of peer
/// groups (worst first), the worst `detailed` connections keep a full section, the timeline draws the
/// worst `summaryLanes` peers with their marks merged into pixel columns, and each rule lists at most
/// `FindingsHTML.maxRows` findings. So the page stays a size a browser opens (a few MB) at any
/// capture size; the JSON report has everything.
struct PageLayout {
    /// Connections a page shows one by one; over this it is summarised.
    static let maxSections = ReportExtras.maxDetailedConnections
    /// Connections with a full section on a summarised page, worst first.
    static let detailed = ReportExtras.fullConnections
    /// Peers (timeline lanes) drawn on a summarised page, worst first.
    static let summaryLanes = 30
    /// Connection numbers listed per peer group in the summary (the rest counted).
    static let maxListed = 24
    /// Peer groups with a row in the summary, worst first; the rest are counted in one last row.
    static let maxGroups = 1000

    let summarised: Bool
    /// Peer groups, worst first (every connection in exactly one); empty unless summarised.
    let groups: [PeerGroup]
    /// Connections with their own section, in the order shown (all of them unless summarised).
    let sections: [Connection]
    /// Group of each connection index (summarised pages).
    private let groupOf: [Int: Int]
    private let hasSection: Set<Int>
    /// Findings (numbered from 1) past `FindingsHTML.maxRows` of their rule, which have no row: links
    /// to them go to their rule's group.
    private let unlisted: [Int: String]

    /// The connections to one peer (adapter and address; those of unknown peer together per adapter).
    struct PeerGroup {
        var number: Int
        var connections: [Connection]
        var title: String
        var findings: [Severity: Int] = [:]
        /// Connections that ended by a link loss or never completed.
        var failed = 0
        var shortest: Int64?
        var longest: Int64?
        var worst: Severity? { Severity.allCases.reversed().first { (findings[$0] ?? 0) > 0 } }
    }

    /// A long session's connections were summarised during the pass: those not on the page link to the note.
    let hasSummarised: Bool

    init(model: SessionModel, findings: [Finding]) {
        var perRule: [String: Int] = [:]
        var unlisted: [Int: String] = [:]
        for (i, f) in findings.enumerated() {
            perRule[f.rule, default: 0] += 1
            if perRule[f.rule, default: 0] > FindingsHTML.maxRows { unlisted[i + 1] = f.rule }
        }
        self.unlisted = unlisted
        hasSummarised = !model.summarised.isEmpty || model.foldedRows.count > 0
        let connections = model.connections
        summarised = connections.count > Self.maxSections
        guard summarised else {
            groups = []
            sections = connections
            groupOf = [:]
            hasSection = Set(connections.map(\.index))
            return
        }
        var bySeverity: [Int: [Severity: Int]] = [:]
        for f in findings { if let c = f.connectionIndex { bySeverity[c, default: [:]][f.severity, default: 0] += 1 } }
        // Worst first: the most severe findings, then how many of them, then a failed link, then the shortest.
        let ranked = connections.map { ($0, ReportExtras.rank($0, findings: bySeverity[$0.index] ?? [:])) }.sorted { $0.1.lexicographicallyPrecedes($1.1) }
        sections = ranked.prefix(Self.detailed).map(\.0)
        hasSection = Set(sections.map(\.index))

        var built: [(PeerGroup, [Int64])] = []
        for cs in TimelineLane.grouped(connections, by: { c in c.peerAddress.map { "\(c.adapter)/\($0.description)" } ?? "\(c.adapter)/?" }) {
            var g = PeerGroup(number: 0, connections: cs, title: Self.title(cs))
            for c in cs {
                for (sev, n) in bySeverity[c.index] ?? [:] { g.findings[sev, default: 0] += n }
                if ReportExtras.failed(c) { g.failed += 1 }
                if let d = ReportExtras.duration(c) {
                    g.shortest = min(g.shortest ?? d, d)
                    g.longest = max(g.longest ?? d, d)
                }
            }
            var key: [Int64] = Severity.allCases.reversed().map { -Int64(g.findings[$0] ?? 0) }
            key += [-Int64(g.failed), g.shortest ?? .max, Int64(cs[0].index)]
            built.append((g, key))
        }
        groups = built.sorted { $0.1.lexicographicallyPrecedes($1.1) }.enumerated().map { i, g in
            var g = g.0
            g.number = i + 1
            return g
        }
        var groupOf: [Int: Int] = [:]
        for g in groups { for c in g.connections { groupOf[c.index] = g.number } }
        self.groupOf = groupOf
    }

    /// Where a link to finding `n` (numbered from 1) goes: its row, or its rule's group when the rule
    /// lists fewer findings than it has.
    func findingHref(_ n: Int) -> String {
        unlisted[n].map { "#rule-" + HTML.escape($0) } ?? "#finding-\(n)"
    }

    /// Where a link to connection `index` goes: its section, or its peer group's row (the last
    /// row for the groups past `maxGroups`).
    func href(_ index: Int) -> String {
        if hasSection.contains(index) { return "#conn-\(index)" }
        // Not on the page: summarised during the pass (`ConnectionsHTML.summarisedNote`).
        guard let group = groupOf[index] else { return hasSummarised ? "#summarised" : "#conn-\(index)" }
        return group <= Self.maxGroups ? "#peer-\(group)" : "#peers-more"
    }

    /// The timeline's lanes: one per peer (the first `TimelineSVG.maxLanes`), or on a summarised
    /// page the worst `summaryLanes` groups, in the order of their first connection.
    func lanes(_ model: SessionModel) -> [TimelineLane] {
        guard summarised else { return Array(TimelineLane.group(model.connections).prefix(TimelineSVG.maxLanes)) }
        return groups.prefix(Self.summaryLanes).sorted { $0.connections[0].index < $1.connections[0].index }
            .map { TimelineLane.lane($0.connections) }
    }

    static func title(_ cs: [Connection]) -> String {
        let c = cs[0]
        let address = c.peerAddress?.description ?? "peer unknown"
        let name = cs.lazy.compactMap(\.peerName).first
        return (name.map { "\($0) (\(address))" } ?? address) + (c.adapter != 0 ? " · hci\(c.adapter)" : "")
    }
}
