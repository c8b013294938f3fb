import BLEProtocol

/// Plays the host side of a recording to a live controller and checks what comes back.
///
/// The recording becomes units (`Script`). Host units are sent in order; before each, every
/// controller unit recorded before it must have arrived (each waited for up to
/// `ReplayOptions.timeout`, else it is `missing`). Live units are matched to expected ones by
/// `MatchKey` (earliest pending first, then a bounded look-ahead), then compared field by field
/// (`Comparator`). Commands honour Num_HCI_Command_Packets and ACL the controller's buffers
/// (`HostFlowControl`). Whatever arrives before the first expected packet matched (stale events
/// of an earlier session) is ignored. Advertising reports recorded after the host stopped
/// scanning were in flight when it did: they are optional (`inFlightReports`).
public final class ReplayEngine {
    enum State { case waiting, pending, matched, skipped, missing }

    let script: Script
    let views: [UnitView]
    let transport: HCITransport
    let options: ReplayOptions
    let capture: LiveCapture?
    private let comparator: Comparator
    /// Step of each unit: the number of host units before it.
    private let stepOf: [Int]

    private var state: [State]
    /// Expected units reached and not yet matched, in recorded order.
    private var pending: [Int] = []
    /// Sightings still awaited, per pending advertising unit (rule `advertising`).
    private var awaitedSightings: [Int: Set<Sighting>] = [:]
    /// Advertising report units recorded between a scan disable command and the next enable.
    /// A controller may still deliver reports it had queued before it handles the disable
    /// (Core v5.4 Vol 4 Part E 7.8.11: scanning stops when the command completes), so whether a
    /// run sees them is timing: matched if they come, otherwise not compared, never `missing`,
    /// and never awaited beyond the other expected units of the same step.
    private var inFlightReports: Set<Int> = []
    /// The host has sent LE Set (Extended) Scan Enable with Enable = 0 and not re-enabled since.
    private var scanStopped = false
    private var maps = LinkMaps()
    private var flow = HostFlowControl()
    private var live = UnitBuilder()
    private var liveCount = 0
    private var firstMatched = false
    private var cursor = 0
    private var step = 0
    private var pacer: Pacer
    private var divergences: [Divergence] = []
    private var replayed = 0, total = 0, notCompared = 0

    public init(script: Script, transport: HCITransport, options: ReplayOptions, capture: LiveCapture? = nil) {
        self.script = script
        self.views = script.units.map(UnitView.init)
        self.transport = transport
        self.options = options
        self.capture = capture
        self.comparator = Comparator(rules: options.rules)
        self.state = Array(repeating: .waiting, count: script.units.count)
        self.pacer = Pacer(options, origin: script.units.first?.timestamp)
        self.stepOf = script.steps
        maps.addresses = options.addressMap
        maps.addressTypes = options.addressTypes
    }

    /// Runs the whole recording. Never throws: a transport failure ends the run and is in the outcome.
    public func run() -> ReplayOutcome {
        let start = Clock.now()
        pacer.start(origin: script.units.first?.timestamp)
        var failure: TransportError?
        do throws(TransportError) {
            for i in script.units.indices {
                cursor = i
                if script.units[i].fromHost {
                    try settle()
                    try send(i)
                    step += 1
                } else {
                    reach(i)
                }
            }
            try settle()
        } catch {
            failure = error
        }
        var notes = script.notes
        for p in transport.framingProblems { notes.append("\(transport.name): \(p)") }
        var outcome = ReplayOutcome(recording: script.path, peer: transport.name, steps: steps(), divergences: divergences, replayed: replayed,
                                    total: total, notCompared: notCompared, error: failure, notes: notes, seconds: Clock.now() - start)
        outcome.lastStep = step
        return outcome
    }

    private func steps() -> [ReplayStep] {
        var out = [ReplayStep(index: 0, frame: nil, title: "start: controller packets before the first host packet")]
        for (i, u) in script.units.enumerated() where u.fromHost {
            out.append(ReplayStep(index: out.count, frame: u.frame, title: views[i].title))
        }
        return out
    }

    // MARK: expected units

    /// An expected unit's turn has come: wait for it, or skip it under the rules.
    private func reach(_ i: Int) {
        guard state[i] == .waiting else { return }   // matched early
        let view = views[i]
        if view.category == .advertising, let only = options.advertisers,
           !Sighting.reports(in: view.unit).contains(where: { only.contains($0.address) }) {
            state[i] = .skipped
            notCompared += view.unit.packets.count
            return
        }
        if view.category == .advertising, scanStopped { inFlightReports.insert(i) }
        if let rule = view.category.rule, options.rules.isRelaxed(rule) {
            if view.category == .advertising {
                awaitedSightings[i] = Set(Sighting.reports(in: view.unit, map: maps.live))
                expect(i)
            } else {
                state[i] = .skipped
                notCompared += view.unit.packets.count
            }
            return
        }
        expect(i)
    }

    /// Makes `i` pending; it counts towards `total` now, or (in flight) only if it comes.
    private func expect(_ i: Int) {
        state[i] = .pending
        pending.append(i)
        if !inFlightReports.contains(i) { total += views[i].unit.packets.count }
    }

    /// `i` came: it is replayed (and, in flight, counted now).
    private func arrived(_ i: Int) {
        state[i] = .matched
        firstMatched = true
        replayed += views[i].unit.packets.count
        if inFlightReports.contains(i) { total += views[i].unit.packets.count }
    }

    /// Waits until every pending expected unit has arrived or timed out, oldest first; in-flight
    /// reports still pending then are not compared.
    private func settle() throws(TransportError) {
        defer {
            for i in pending where state[i] == .pending && inFlightReports.contains(i) {
                state[i] = .skipped
                notCompared += views[i].unit.packets.count
            }
            pending.removeAll { state[$0] != .pending }
        }
        while let first = pending.first(where: { !inFlightReports.contains($0) }) {
            let deadline = Clock.now() + options.timeout
            while state[first] == .pending {
                let remaining = deadline - Clock.now()
                if remaining <= 0 { missing(first); break }
                if let packet = try transport.receive(timeout: remaining) { handle(packet) }
            }
            pending.removeAll { state[$0] != .pending }
        }
    }

    private func missing(_ i: Int) {
        state[i] = .missing
        let view = views[i]
        // The command's answer is already reported missing; do not also stall the next command on
        // the credit it would have returned.
        if view.opcode != nil { flow.commandCredits = max(flow.commandCredits, 1) }
        var message = "\(view.title): not received within \(Self.seconds(options.timeout))"
        if let sightings = awaitedSightings[i], !sightings.isEmpty {
            message = "advertising report not received within \(Self.seconds(options.timeout)): "
                + sightings.map(\.summary).sorted().joined(separator: "; ")
        }
        divergences.append(Divergence(kind: .missing, frame: view.unit.frame, step: stepOf[i], fromHost: false,
                                      message: message, differences: [], expected: view.unit, actual: nil))
    }

    // MARK: live units

    private func handle(_ packet: H4Packet) {
        capture?.log(packet, outgoing: false)
        liveCount += 1
        for unit in live.push(packet, fromHost: false, frame: liveCount, timestamp: Clock.wallMicros()) {
            let view = UnitView(unit)
            flow.observe(view)
            if view.isDisconnectionComplete, let h = view.handle { live.disconnected(handle: h) }
            match(view)
        }
    }

    private func match(_ v: UnitView) {
        if let rule = v.category.rule, options.rules.isRelaxed(rule) {
            if v.category == .advertising { sighted(v) }
            return
        }
        let key = MatchKey(v, handle: { $0 })
        let candidate: (UnitView) -> Bool = { [maps] e in e.category == v.category && MatchKey(e, handle: maps.live) == key }
        if let i = pending.first(where: { state[$0] == .pending && awaitedSightings[$0] == nil && candidate(views[$0]) }) {
            matched(i, v)
        } else if firstMatched, let i = lookahead(candidate) {
            total += views[i].unit.packets.count
            matched(i, v)
        } else if v.category == .advertising, scanStopped {
            return   // in flight when scanning stopped: timing, not a divergence
        } else if firstMatched, !options.rules.isRelaxed(ReplayRules.unexpected) {
            divergences.append(Divergence(kind: .unexpected, frame: nil, step: step, fromHost: false,
                                          message: "\(v.title): not in the recording", differences: [], expected: nil, actual: v.unit))
        }
    }

    /// An expected unit not reached yet that `candidate` accepts (a packet that came early).
    private func lookahead(_ candidate: (UnitView) -> Bool) -> Int? {
        let end = min(script.units.count, cursor + 1 + options.lookahead)
        guard cursor + 1 < end else { return nil }
        for i in (cursor + 1) ..< end where state[i] == .waiting && !script.units[i].fromHost {
            let e = views[i]
            if let rule = e.category.rule, options.rules.isRelaxed(rule) { continue }
            if candidate(e) { return i }
        }
        return nil
    }

    private func matched(_ i: Int, _ v: UnitView) {
        arrived(i)
        let e = views[i]
        if e.isConnectionComplete, let recorded = e.handle, let liveHandle = v.handle, e.integer("Status") == 0, v.integer("Status") == 0 {
            maps.learn(recorded: recorded, live: liveHandle)
            maps.pendingIntervalRange = nil
        }
        let differences = comparator.differences(expected: e, actual: v, maps: maps)
        guard !differences.isEmpty else { return }
        divergences.append(Divergence(kind: .mismatch, frame: e.unit.frame, step: stepOf[i], fromHost: false,
                                      message: "\(e.title): differs", differences: differences, expected: e.unit, actual: v.unit))
    }

    /// Advertising reports under the `advertising` rule: each pending report unit is satisfied
    /// once every (advertiser, type, data) it recorded has been seen.
    private func sighted(_ v: UnitView) {
        let seen = Set(Sighting.reports(in: v.unit))
        for i in pending where state[i] == .pending {
            guard var awaited = awaitedSightings[i] else { continue }
            awaited.subtract(seen)
            awaitedSightings[i] = awaited
            if awaited.isEmpty { arrived(i) }
        }
    }

    // MARK: sending

    private func send(_ i: Int) throws(TransportError) {
        let unit = script.units[i]
        total += unit.packets.count
        try pump(until: pacer.due(unit.timestamp))
        switch unit.content {
        case let .command(bytes):
            noteScanEnable(bytes)
            let takesCredit = views[i].opcode != HostRewriter.hostNumberOfCompletedPackets
            if takesCredit { try waitFor("a command credit (Num_HCI_Command_Packets)", step: i) { $0.flow.commandCredits > 0 } }
            let rewritten = HostRewriter.command(bytes, maps: maps)
            HostRewriter.noteIntervalRequest(UnitView(LinkUnit(content: .command(rewritten), packets: [], frames: [], timestamp: 0, fromHost: true)), maps: &maps)
            try transmit(H4Packet(.command, rewritten))
            if takesCredit { flow.sentCommand() }
        default:
            for packet in unit.packets {
                for piece in HostRewriter.acl(packet, maps: maps, maxLength: flow.aclMaxLength) {
                    if piece.type == .acl, piece.bytes.count >= 2 {
                        try waitFor("an ACL buffer (Number Of Completed Packets)", step: i) { $0.flow.canSendACL }
                        flow.sentACL(handle: (UInt16(piece.bytes[0]) | UInt16(piece.bytes[1]) << 8) & 0x0FFF)
                    }
                    try transmit(piece)
                }
            }
        }
        replayed += unit.packets.count
        pacer.sent(unit.timestamp)
    }

    /// Follows LE Set Scan Enable / LE Set Extended Scan Enable (Enable is the first parameter).
    private func noteScanEnable(_ command: [UInt8]) {
        guard command.count >= 4 else { return }
        let opcode = UInt16(command[0]) | UInt16(command[1]) << 8
        guard opcode == HCIOpcode.leSetScanEnable.rawValue || opcode == HCIOpcode.leSetExtendedScanEnable.rawValue else { return }
        scanStopped = command[3] == 0
    }

    private func transmit(_ packet: H4Packet) throws(TransportError) {
        try transport.send(packet)
        capture?.log(packet, outgoing: true)
    }

    /// Handles live packets until `deadline` (recorded gaps under `--timing original`).
    private func pump(until deadline: Double) throws(TransportError) {
        while true {
            let remaining = deadline - Clock.now()
            guard remaining > 0 else { return }
            if let packet = try transport.receive(timeout: remaining) { handle(packet) }
        }
    }

    /// Handles live packets until `ready`, at most the timeout; a stall is reported once and
    /// sending goes on (the controller may still take the packet).
    private func waitFor(_ what: String, step i: Int, _ ready: (ReplayEngine) -> Bool) throws(TransportError) {
        let deadline = Clock.now() + options.timeout
        while !ready(self) {
            let remaining = deadline - Clock.now()
            if remaining <= 0 {
                divergences.append(Divergence(kind: .missing, frame: script.units[i].frame, step: stepOf[i], fromHost: true,
                                              message: "\(views[i].title): the controller gave no \(what) within \(Self.seconds(options.timeout)); sent anyway",
                                              differences: [], expected: nil, actual: nil))
                flow.commandCredits = max(flow.commandCredits, 1)
                flow.forgetInFlight()
                return
            }
            if let packet = try transport.receive(timeout: remaining) { handle(packet) }
        }
    }

    static func seconds(_ s: Double) -> String {
        s == s.rounded() ? "\(Int(s)) s" : "\(s) s"
    }
}
