import ArgumentParser
import BLEAnalysis
import BLECapture
import BLEReport

/// Runs the analysis pass over a capture (shared by the session commands).
struct AnalysisRun {
    let file: CaptureFile
    let analyzer: Analyzer
    let summary: ReadSummary

    init(_ capture: CaptureArgument) throws {
        file = try capture.open()
        let analyzer = Analyzer()
        summary = file.read { analyzer.consume($0) }
        _ = analyzer.finish()   // closes per-link summaries (air captures) for the story
        self.analyzer = analyzer
        for issue in summary.issues { Diagnostics.warn("\(capture.name): \(issue)") }
    }
}

/// `bleanalyze timeline FILE`: one line per meaningful event per connection.
struct Timeline: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "One story per connection: connect, MTU, discovery, subscriptions, data, errors, disconnect.")
    @OptionGroup var capture: CaptureArgument
    @Flag(name: .long, help: "JSON instead of text.") var json = false
    @Option(name: .long, help: "Only this connection: its number in the report (3), a handle (0x0040, h64), a peer address or a peer name.")
    var conn: String?
    @Option(name: .long, help: ArgumentHelp("Only connections to this device: its name or address.", valueName: "NAME|ADDR"))
    var peer: String?

    func run() throws {
        var selector = PacketFilterOptions()
        selector.conn = conn
        let wanted = try selector.connectionFilter()
        let run = try AnalysisRun(capture)
        let model = run.analyzer.session
        var only: Set<Int>? = nil
        if let wanted {
            let picked = model.connections.filter { c in
                switch wanted {
                case let .index(i): c.index == i
                case let .handle(h): c.handle == h
                case let .address(a): c.peerAddress == a
                case let .name(n): PeerScope(n).matches(c)
                }
            }
            guard !picked.isEmpty else {
                Diagnostics.warn("\(capture.name): no connection \(conn ?? "") (the capture has \(model.connections.count))")
                throw ExitCode(ExitCodes.badInput)
            }
            only = Set(picked.map(\.index))
        }
        if let peer {
            let scope = PeerScope(peer)
            let picked = model.connections.filter { scope.matches($0) && (only?.contains($0.index) ?? true) }
            guard !picked.isEmpty else {
                Diagnostics.warn("\(capture.name): no connection to \(peer) (the capture has \(model.connections.count))")
                throw ExitCode(ExitCodes.badInput)
            }
            only = Set(picked.map(\.index))
        }
        var out = Output()
        out.write(json ? SessionJSON.timeline(model, only: only) + "\n" : SessionText.timeline(model, only: only))
        out.flush()
    }
}

/// `bleanalyze gatt FILE`: the attribute table rebuilt per GATT server.
struct Gatt: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatt", abstract: "The GATT database rebuilt from discovery, per server.")
    @OptionGroup var capture: CaptureArgument
    @Flag(name: .long, help: "JSON instead of text.") var json = false

    func run() throws {
        let run = try AnalysisRun(capture)
        var out = Output()
        out.write(json ? SessionJSON.gatt(run.analyzer.session) + "\n" : SessionText.gatt(run.analyzer.session))
        out.flush()
    }
}

/// `bleanalyze adv FILE`: advertisers seen in advertising reports.
struct Adv: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Advertisers: address, names, services, company, RSSI, count and interval.")
    @OptionGroup var capture: CaptureArgument
    @Flag(name: .long, help: "JSON instead of text.") var json = false
    @Option(name: .long, help: ArgumentHelp("Only this device: its name (any it advertised) or address.", valueName: "NAME|ADDR"))
    var peer: String?

    func run() throws {
        let run = try AnalysisRun(capture)
        var out = Output()
        let scope = peer.map(PeerScope.init)
        let only = scope.map { s in { (a: Advertisers.Advertiser) in s.matches(a) } }
        out.write(json ? SessionJSON.advertisers(run.analyzer.session, only: only) + "\n" : SessionText.advertisers(run.analyzer.session, only: only))
        out.flush()
    }
}
