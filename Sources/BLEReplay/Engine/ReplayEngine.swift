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
/// scanning were in flight when it did: they are optional (`Awaited.inFlight`).
public final class ReplayEngine {
    enum State { case waiting, pending, matched, skipped, missing }

    let transport: HCITransport
    let options: ReplayOptions
    let capture: LiveCapture?
    /// The recording, its units' states and the pacer (`PlayedScript`).
    private var played: PlayedScript<State>
    /// Where the run is in the script, and its packet counts (`ReplayProgress`).
    private var progress = ReplayProgress()
    /// What is awaited from the live controller (`Awaited`).
    private var awaited = Awaited()
    /// The recorded connections and how they fare live (`ReplayConnections`).
    private var connections: ReplayConnections
    private var maps = LinkMaps()
    private var flow = HostFlowControl()
    /// The controller's packets as they arrive, built into units.
    private var live = LiveUnits(fromHost: false)
    private var divergences: [Divergence] = []
    /// Connection attempts as the run made them live (`LiveAttempts`).
    private var attempts = LiveAttempts()
    /// Commands the run sent itself or withheld, and its notes (`OwnCommands`).
    private var ownCommands = OwnCommands()
    /// Called before the host's connection attempt that, in the recording, made the n-th (1-based)
    /// connection to a device that is there (`--peer`: the twin advertises again only then, so
    /// the attempts that failed in the recording fail live too).
    public var beforeConnecting: (Int) -> Void = { _ in }

    public init(script: Script, transport: HCITransport, options: ReplayOptions, capture: LiveCapture? = nil) {
        let played = PlayedScript(script, options: options, initial: State.waiting)
        self.played = played
        self.transport = transport
        self.options = options
        self.capture = capture
        self.connections = ReplayConnections(played.views, options: options)
        maps.addresses = options.addressMap
        maps.addressTypes = options.addressTypes
    }

    /// Runs the whole recording. Never throws: a transport failure ends the run and is in the outcome.
    public func run() -> ReplayOutcome {
        let start = Clock.now()
        played.pacer.start(origin: played.units.first?.timestamp)
        var failure: TransportError?
        do throws(TransportError) {
            for i in played.units.indices {
                progress.cursor = i
                if let k = connections.of[i] {
                    if connections.down.contains(k) {
                        if connections.absent.contains(k), played.views[i].isConnectionComplete { try cancelAbsentAttempt(i, connection: k) }
                        skip(i, connection: k); continue
                    }
                    if connections.openedByRun.contains(k), connections.outcomes[k].liveHandle == nil { try connectOpenBeforeLog(i, connection: k) }
                    connections.touch(k)
                }
                if played.units[i].fromHost {
                    try settle()
                    try send(i)
                    progress.step += 1
                } else {
                    reach(i)
                }
            }
            try settle()
        } catch {
            failure = error
        }
        reportSkipped()
        noteWithheld()
        var notes = played.script.notes + ownCommands.notes
        for p in transport.framingProblems { notes.append("\(transport.name): \(p)") }
        var outcome = ReplayOutcome(recording: played.script.path, peer: transport.name, steps: played.steps(), divergences: divergences, replayed: progress.replayed,
                                    total: progress.total, notCompared: progress.notCompared, error: failure, notes: notes, seconds: Clock.now() - start)
        outcome.lastStep = progress.step
        outcome.connections = connectionOutcomes()
        outcome.strictEnvironment = !options.rules.isRelaxed(ReplayRules.environment)
        return outcome
    }

    // MARK: expected units

    /// An expected unit's turn has come: wait for it, or skip it under the rules.
    private func reach(_ i: Int) {
        guard played.state[i] == .waiting else { return }   // matched early
        let view = played.views[i]
        // The answer to a command the run did not send (rule `configuration`).
        if view.eventCode == HCIEventCode.commandComplete || view.eventCode == HCIEventCode.commandStatus,
           let op = view.opcode, let n = ownCommands.withheldAnswers[op], n > 0 {
            ownCommands.withheldAnswers[op] = n - 1
            notCompared(i)
            return
        }
        if view.category == .advertising, let only = options.advertisers,
           !Sighting.reports(in: view.unit).contains(where: { only.contains($0.address) }) {
            notCompared(i)
            return
        }
        if view.category == .advertising, awaited.scanStopped { awaited.inFlight.insert(i) }
        // Under `--peer` the twin stops advertising once connected, and its reports are the
        // twin controller's timing: matched if they come, never waited for.
        if view.category == .advertising, options.advertisers != nil { awaited.inFlight.insert(i) }
        // The recorded controller's power-on events (before the host's first packet): another
        // controller has its own, or none.
        // (Not the packets of a link the run made itself: they are the session's.)
        if played.stepOf[i] == 0, !(connections.of[i].map { connections.openedByRun.contains($0) } ?? false) { awaited.inFlight.insert(i) }
        // ACL of a PDU the disconnection cut (the host ended the link while the device was
        // sending it): whether any of it gets through before the link ends is timing.
        if cutByDisconnection(i) { awaited.inFlight.insert(i) }
        // The device's data recorded after the host asked to disconnect (HCI Disconnect on this link,
        // its Disconnection Complete not yet): sent while the link was ending, so whether it gets
        // through before the live link ends is timing (a streaming device; seen on a loaded machine).
        if sentWhileEnding(i) { awaited.inFlight.insert(i) }
        // Under `--peer`, events about another device than the twin's (a connection request, a
        // name, a link key of a phone's other peers) cannot come: that device is not there.
        if let only = options.advertisers, view.eventCode != nil, view.eventCode != HCIEventCode.commandComplete,
           view.eventCode != HCIEventCode.commandStatus, view.category != .advertising,
           let peer = view.fields.lazy.compactMap({ f -> BDAddr? in if f.topLevel, case let .address(a, _) = f.value { return a } else { return nil } }).first,
           peer != BDAddr(0), !only.contains(peer) {
            awaited.inFlight.insert(i)
        }
        // Under `--peer`, the end of a BR/EDR inquiry (Core v5.4 Vol 4 Part E 7.7.1): it comes
        // after Inquiry_Length × 1.28 s, or not at all once cancelled (7.1.2; some controllers
        // send it anyway), and the devices it looked for are not on the twin's radio.
        if options.advertisers != nil, view.eventCode == HCIEventCode.inquiryComplete { awaited.inFlight.insert(i) }
        if let rule = view.category.rule, options.rules.isRelaxed(rule) {
            if view.category == .advertising {
                awaited.sightings[i] = Set(Sighting.reports(in: view.unit, map: maps.live))
                expect(i)
            } else {
                notCompared(i)
            }
            return
        }
        expect(i)
    }

    /// `i` is the device's data on a link whose host had sent Disconnect (Core v5.4 Vol 4 Part E
    /// 7.1.6) and not yet seen its Disconnection Complete.
    private func sentWhileEnding(_ i: Int) -> Bool {
        let unit = played.units[i]
        guard !unit.fromHost, let k = connections.of[i] else { return false }
        switch unit.content {
        case .l2cap: break
        case let .raw(p) where p.type == .acl: break
        default: return false
        }
        for j in stride(from: i - 1, through: max(0, i - 256), by: -1) where connections.of[j] == k {
            if played.views[j].isDisconnectionComplete || played.views[j].isConnectionComplete { return false }
            if played.units[j].fromHost, played.views[j].opcode == HCIOpcode.disconnect.rawValue { return true }
        }
        return false
    }

    /// `i` is the start of an L2CAP PDU that never completed (a raw ACL unit) and the next unit
    /// of its connection is the Disconnection Complete.
    private func cutByDisconnection(_ i: Int) -> Bool {
        guard case let .raw(packet) = played.units[i].content, packet.type == .acl, let k = connections.of[i] else { return false }
        for j in played.units.indices.dropFirst(i + 1).prefix(64) where connections.of[j] == k {
            if case let .raw(p) = played.units[j].content, p.type == .acl { continue }
            return played.views[j].isDisconnectionComplete
        }
        return false
    }

    /// Makes `i` pending; it counts towards `total` now, or (in flight) only if it comes.
    private func expect(_ i: Int) {
        played.state[i] = .pending
        awaited.pending.append(i)
        if !awaited.inFlight.contains(i) { progress.total += played.views[i].unit.packets.count }
    }

    /// `i` came: it is replayed (and, in flight, counted now).
    private func arrived(_ i: Int) {
        played.state[i] = .matched
        progress.firstMatched = true
        progress.replayed += played.views[i].unit.packets.count
        if awaited.inFlight.contains(i) { progress.total += played.views[i].unit.packets.count }
    }

    /// `i` is not compared (the rules, a device not there, in flight and not come): skipped.
    private func notCompared(_ i: Int) {
        played.state[i] = .skipped
        progress.notCompared += played.units[i].packets.count
    }

    /// `j` will not come after all: not compared, and no longer counted in `total` if it was
    /// when it was reached.
    private func withdraw(_ j: Int) {
        if played.state[j] == .pending, !awaited.inFlight.contains(j) { progress.total -= played.units[j].packets.count }
        notCompared(j)
    }

    /// Waits until every pending expected unit has arrived or timed out, oldest first; in-flight
    /// reports still pending then are not compared.
    private func settle() throws(TransportError) {
        defer {
            for i in awaited.pending where played.state[i] == .pending && awaited.inFlight.contains(i) {
                notCompared(i)
            }
            awaited.dropSettled(played.state)
        }
        while let first = awaited.pending.first(where: { !awaited.inFlight.contains($0) }) {
            let deadline = Clock.now() + options.timeout
            while played.state[first] == .pending {
                let remaining = deadline - Clock.now()
                if remaining <= 0 { missing(first); break }
                if let packet = try transport.receive(timeout: remaining) { handle(packet) }
            }
            awaited.dropSettled(played.state)
        }
    }

    private func missing(_ i: Int) {
        played.state[i] = .missing
        let view = played.views[i]
        if view.isConnectionComplete, let k = connections.of[i] { goDown(k) }
        // The command's answer is already reported missing; do not also stall the next command on
        // the credit it would have returned.
        if view.opcode != nil { flow.commandCredits = max(flow.commandCredits, 1) }
        var message = "\(view.title): not received within \(Self.seconds(options.timeout))"
        if let sightings = awaited.sightings[i], !sightings.isEmpty {
            message = "advertising report not received within \(Self.seconds(options.timeout)): "
                + sightings.map(\.summary).sorted().joined(separator: "; ")
        }
        add(Divergence(kind: .missing, frame: view.unit.frame, step: played.stepOf[i], fromHost: false,
                       message: message, differences: [], expected: view.unit, actual: nil), unit: i)
    }

    // MARK: live units

    private func handle(_ packet: H4Packet) {
        capture?.log(packet, outgoing: false)
        for view in live.push(packet) {
            flow.observe(view)
            if let own = ownCommands.awaited, view.opcode == own,
               view.eventCode == HCIEventCode.commandComplete || view.eventCode == HCIEventCode.commandStatus {
                // A cancel the controller refused: no attempt was open, no connection complete follows.
                if own == HCIOpcode.leCreateConnectionCancel.rawValue, (view.integer(.status) ?? 0) != 0 { attempts.cancelled = false }
                ownCommands.awaited = nil
                continue
            }
            if view.isDisconnectionComplete, let h = view.handle { live.disconnected(handle: h) }
            if let k = attempts.ownConnecting, view.isConnectionComplete {
                attempts.ownConnecting = nil
                attempts.leOpen = false
                if view.integer(.status) == 0, let h = view.handle {
                    maps.learn(recorded: connections.outcomes[k].recordedHandle, live: h)
                    connections.cameUp(k, liveHandle: h)
                }
                continue
            }
            if view.isConnectionComplete {
                defer { attempts.leOpen = false }
                // The end of the attempt the run cancelled itself (Unknown Connection Identifier,
                // Core v5.4 Vol 4 Part E 7.8.13): not the recording's.
                if attempts.cancelled, (view.integer(.status) ?? 0) != 0 { attempts.cancelled = false; continue }
            }
            if view.eventCode == HCIEventCode.commandStatus, let op = view.opcode, Self.leConnectOpcodes.contains(op), (view.integer(.status) ?? 0) != 0 {
                attempts.leOpen = false
            }
            match(view)
        }
    }

    private func match(_ v: UnitView) {
        if let rule = v.category.rule, options.rules.isRelaxed(rule) {
            if v.category == .advertising { sighted(v) }
            return
        }
        let key = MatchKey(v, handle: { $0 })
        let livePeer = Self.peer(v)
        let candidate: (UnitView) -> Bool = { [maps, absentTargets = attempts.absentTargets] e in
            guard e.category == v.category && MatchKey(e, handle: maps.live) == key else { return false }
            // A connection complete is another connection's when it is BR/EDR against LE, or
            // both succeeded with different (mapped) peers.
            if e.isConnectionComplete {
                if (e.eventCode == HCIEventCode.leMeta) != (v.eventCode == HCIEventCode.leMeta) { return false }
                if e.integer(.status) == 0, v.integer(.status) == 0, let recorded = Self.peer(e), let livePeer, maps.live(recorded) != livePeer { return false }
                // The failure of an attempt to reach an absent device is not a recorded success.
                if e.integer(.status) == 0, (v.integer(.status) ?? 0) != 0, !absentTargets.isEmpty { return false }
            }
            return true
        }
        if let i = awaited.pending.first(where: { played.state[$0] == .pending && awaited.sightings[$0] == nil && !connections.isAbsent($0) && candidate(played.views[$0]) }) {
            matched(i, v)
        } else if progress.firstMatched, let i = lookahead(candidate) ?? connectionLookahead(v, candidate) {
            progress.total += played.views[i].unit.packets.count
            matched(i, v)
        } else if v.category == .advertising, awaited.scanStopped {
            return   // in flight when scanning stopped: timing, not a divergence
        } else if progress.firstMatched, !options.rules.isRelaxed(ReplayRules.unexpected) {
            var d = Divergence(kind: .unexpected, frame: nil, step: progress.step, fromHost: false,
                               message: "\(v.title): not in the recording", differences: [], expected: nil, actual: v.unit)
            // Under `--peer`, an event about another device than the twin's (the outcome of an
            // attempt to reach a device that is not there) is the environment's.
            if let only = options.advertisers,
               let peer = v.fields.lazy.compactMap({ f -> BDAddr? in if f.topLevel, case let .address(a, _) = f.value { return a } else { return nil } }).first,
               peer != BDAddr(0), !only.contains(maps.recordedAddress(peer)) { d.classOverride = .environment }
            // The failure of an attempt to reach an absent device (its address zeroed).
            if options.advertisers != nil, v.isConnectionComplete, (v.integer(.status) ?? 0) != 0, !attempts.absentTargets.isEmpty { d.classOverride = .environment }
            divergences.append(d)
        }
    }

    /// An expected unit not reached yet that `candidate` accepts (a packet that came early).
    /// Units the rules relax (advertising reports, flow control, the phone's vendor ACL) are not
    /// counted in the look-ahead: a field log has thousands between two notifications.
    private func lookahead(_ candidate: (UnitView) -> Bool) -> Int? {
        var counted = 0, i = progress.cursor + 1
        while i < played.units.count, counted < options.lookahead {
            defer { i += 1 }
            let e = played.views[i]
            if let rule = e.category.rule, options.rules.isRelaxed(rule) { continue }
            counted += 1
            guard played.state[i] == .waiting, !played.units[i].fromHost, !connections.isAbsent(i) else { continue }
            if candidate(e) { return i }
        }
        return nil
    }

    /// A device's PDU that came long before its turn: a twin sends what its device sent
    /// unprompted (a notification recorded seconds after the central's last PDU, with hundreds of
    /// the host's packets between) as soon as the story reaches it. It matches the earliest
    /// expected PDU of the same key on its connection, up to that connection's end.
    private func connectionLookahead(_ v: UnitView, _ candidate: (UnitView) -> Bool) -> Int? {
        guard case .l2cap = v.unit.content, let live = v.handle else { return nil }
        var i = progress.cursor + 1
        while i < played.units.count {
            defer { i += 1 }
            let e = played.views[i]
            guard let h = e.handle, maps.live(h) == live else { continue }
            if e.isDisconnectionComplete { return nil }
            guard case .l2cap = e.unit.content, played.state[i] == .waiting, !played.units[i].fromHost, !connections.isAbsent(i) else { continue }
            if candidate(e) { return i }
        }
        return nil
    }

    private func matched(_ i: Int, _ v: UnitView) {
        arrived(i)
        let e = played.views[i]
        if let k = connections.of[i] { connections.touch(k) }
        if e.isConnectionComplete, let recorded = e.handle, let liveHandle = v.handle, e.integer(.status) == 0, v.integer(.status) == 0 {
            maps.learn(recorded: recorded, live: liveHandle)
            maps.pendingIntervalRange = nil
            if let k = connections.of[i] { connections.cameUp(k, liveHandle: liveHandle) }
        } else if e.isConnectionComplete, let k = connections.of[i] {
            goDown(k)   // recorded success, live failure
        }
        // A connection attempt the live controller refused: the connection complete it would
        // have ended with will not come.
        if e.eventCode == HCIEventCode.commandStatus, let op = e.opcode, Self.connectOpcodes.contains(op),
           e.integer(.status) == 0, let status = v.integer(.status), status != 0,
           let j = played.units.indices[(i + 1)...].first(where: { played.views[$0].isConnectionComplete }), played.state[j] == .waiting {
            if let k = connections.of[j] { goDown(k) } else {
                notCompared(j)   // an attempt that failed in the recording too: its failure will not come
            }
        }
        if DivergenceClass.isCancelRace(expected: e.unit, actual: v.unit) { cancelRace(at: i, recordedStatus: e.integer(.status) ?? 0) }
        // A command on a link the live controller no longer has (Unknown Connection Identifier,
        // the peer ended it sooner live): nothing but its disconnection comes on it any more.
        if e.eventCode == HCIEventCode.commandStatus || e.eventCode == HCIEventCode.commandComplete, e.integer(.status) == 0,
           v.integer(.status) == UInt64(HCIStatus.unknownConnectionIdentifier.rawValue), let k = connections.of[i] { linkGoneLive(k, after: i) }
        let differences = played.comparator.differences(expected: e, actual: v, maps: maps)
        guard !differences.isEmpty else { return }
        var d = Divergence(kind: .mismatch, frame: e.unit.frame, step: played.stepOf[i], fromHost: false,
                           message: "\(e.title): differs", differences: differences, expected: e.unit, actual: v.unit)
        // Under `--peer`, the answer to a connection attempt to another device than the twin's:
        // that device is not there.
        if let op = e.opcode, e.eventCode == HCIEventCode.commandStatus || e.eventCode == HCIEventCode.commandComplete,
           attempts.absentTargets.contains(op) { d.classOverride = .environment }
        add(d, unit: i)
    }

    /// LE Create Connection Cancel found live what the recorded one did not (`isCancelRace`): an
    /// attempt still pending, or none. The attempt's end follows the live answer: a recorded
    /// cancel that succeeded ended its attempt with a connection complete (Unknown Connection
    /// Identifier, Core v5.4 Vol 4 Part E 7.8.13) that will not come live (not compared); a live
    /// cancel that succeeded where the recorded one was refused brings one the recording lacks
    /// (swallowed, as for the run's own cancel).
    private func cancelRace(at i: Int, recordedStatus: UInt64) {
        guard recordedStatus == 0 else { attempts.cancelled = true; return }
        attempts.leOpen = false
        guard let j = played.units.indices[(i + 1)...].prefix(options.lookahead).first(where: { played.views[$0].isConnectionComplete }),
              played.state[j] == .waiting || played.state[j] == .pending, (played.views[j].integer(.status) ?? 0) != 0 else { return }
        withdraw(j)
        awaited.pending.removeAll { $0 == j }
    }

    /// The live controller has no link `k` any more: the device's packets and events recorded on
    /// it after `i`, up to its Disconnection Complete (compared as any), will not come: not
    /// compared.
    private func linkGoneLive(_ k: Int, after i: Int) {
        for j in played.units.indices[(i + 1)...] where connections.of[j] == k {
            if played.views[j].isDisconnectionComplete { break }
            guard !played.units[j].fromHost, played.state[j] == .waiting || played.state[j] == .pending else { continue }
            withdraw(j)
        }
        awaited.dropSettled(played.state)
    }

    /// The first top-level address of an event (the peer of a connection complete), if any.
    static func peer(_ v: UnitView) -> BDAddr? {
        v.fields.lazy.compactMap { f -> BDAddr? in if f.topLevel, case let .address(a, _) = f.value { return a } else { return nil } }.first
    }

    static let connectOpcodes: Set<UInt16> = [HCIOpcode.leCreateConnection.rawValue, HCIOpcode.leExtendedCreateConnection.rawValue,
                                              HCIOpcode.leExtendedCreateConnectionV2.rawValue, HCIOpcode.createConnection.rawValue]

    /// Advertising reports under the `advertising` rule: each pending report unit is satisfied
    /// once every (advertiser, type, data) it recorded has been seen.
    private func sighted(_ v: UnitView) {
        let seen = Set(Sighting.reports(in: v.unit))
        for i in awaited.pending where played.state[i] == .pending {
            guard var rest = awaited.sightings[i] else { continue }
            rest.subtract(seen)
            awaited.sightings[i] = rest
            if rest.isEmpty { arrived(i) }
        }
    }

    // MARK: sending

    private func send(_ i: Int) throws(TransportError) {
        let unit = played.units[i]
        if played.views[i].category == .vendor, options.rules.isRelaxed(ReplayRules.vendor) {
            progress.notCompared += unit.packets.count   // the recorded phone's vendor diagnostics (ACL 0x0EDC)
            return
        }
        if case .command = unit.content, let op = played.views[i].opcode, HCIOpcode(rawValue: op).isVendor, options.rules.isRelaxed(ReplayRules.vendor) {
            // The recorded controller's vendor commands: another controller's vendor commands mean
            // something else, or nothing (Unknown HCI Command). Not sent, their answers not compared.
            notCompared(i)
            ownCommands.withheldVendor += 1
            ownCommands.withheldAnswers[op, default: 0] += 1
            return
        }
        if case .command = unit.content, let op = played.views[i].opcode, ReplayRules.unneededConfiguration.contains(op),
           options.rules.isRelaxed(ReplayRules.configuration) {
            // Controller configuration the session does not need: not sent (a controller may
            // refuse it, or, as RootCanal 1.10.0 does, abort on it), its answer not compared.
            notCompared(i)
            ownCommands.withheld[op, default: []].append(unit.frame)
            ownCommands.withheldAnswers[op, default: 0] += 1
            add(Divergence(kind: .skipped, frame: unit.frame, step: played.stepOf[i] + 1, fromHost: true,
                           message: "\(played.views[i].title): not sent: controller configuration the session does not need (rule configuration)",
                           differences: [], expected: unit, actual: nil, classOverride: .environment), unit: i)
            return
        }
        progress.total += unit.packets.count
        try pump(until: played.pacer.due(unit.timestamp))
        switch unit.content {
        case let .command(bytes):
            noteScanEnable(bytes)
            noteAcceptList(i)
            try prepareEventMasks(i)
            try prepareRandomAddress(i)
            try prepareAcceptList(i)
            announceConnecting(i)
            noteTarget(i)
            if let op = played.views[i].opcode, Self.leConnectOpcodes.contains(op) { attempts.leOpen = true }
            if played.views[i].opcode == HCIOpcode.leCreateConnectionCancel.rawValue { attempts.leOpen = false }
            let takesCredit = played.views[i].opcode != HCIOpcode.hostNumberOfCompletedPackets.rawValue
            if takesCredit { try waitFor("a command credit (Num_HCI_Command_Packets)", step: i) { $0.flow.commandCredits > 0 } }
            let rewritten = fastInterval(HostRewriter.command(bytes, maps: maps), unit: i)
            HostRewriter.noteIntervalRequest(UnitView(LinkUnit(content: .command(rewritten), packets: [], frames: [], timestamp: 0, fromHost: true)), maps: &maps)
            try transmit(H4Packet(.command, rewritten))
            if takesCredit { flow.sentCommand() }
        default:
            for packet in unit.packets {
                for piece in HostRewriter.acl(packet, maps: maps, maxLength: flow.aclMaxLength) {
                    if piece.type == .acl, let handle = piece.bytes.withReader({ HCIPacketHeader.aclHandle($0) }) {
                        try waitFor("an ACL buffer (Number Of Completed Packets)", step: i) { $0.flow.canSendACL }
                        flow.sentACL(handle: handle)
                    }
                    try transmit(piece)
                }
            }
        }
        progress.replayed += unit.packets.count
        played.state[i] = .matched
        played.pacer.sent(unit.timestamp)
    }

    /// Follows the recording's LE Add Device To / Remove Device From / Clear Filter Accept List
    /// (Core v5.4 Vol 4 Part E 7.8.16–7.8.18).
    private func noteAcceptList(_ i: Int) {
        switch played.views[i].opcode {
        case HCIOpcode.leClearFilterAcceptList.rawValue?: attempts.acceptListed.removeAll()
        case HCIOpcode.leAddDeviceToFilterAcceptList.rawValue?: if let a = Self.peer(played.views[i]) { attempts.acceptListed.insert(a) }
        case HCIOpcode.leRemoveDeviceFromFilterAcceptList.rawValue?: if let a = Self.peer(played.views[i]) { attempts.acceptListed.remove(a) }
        default: break
        }
    }

    /// Follows LE Set Scan Enable / LE Set Extended Scan Enable (Enable is the first parameter).
    private func noteScanEnable(_ command: [UInt8]) {
        let (opcode, enable) = command.withReader { r in (HCIPacketHeader.commandOpcode(r), HCIPacketHeader.commandParameters(r)?.peekU8()) }
        guard let enable, opcode == .leSetScanEnable || opcode == .leSetExtendedScanEnable else { return }
        awaited.scanStopped = enable == 0
    }

    /// `--timing fast` (with rule `conn-interval`): a command asking for a connection interval
    /// asks for the shortest (7.5 ms, Core v5.4 Vol 4 Part E 7.8.12) instead. The interval is
    /// radio timing, not what a recording tests, and a controller moves ACL data once per
    /// connection event: RootCanal takes one interval per ATT round trip, so a session recorded
    /// at 48.75 ms replays 6.5 times faster. The live interval is compared against the range
    /// sent (rule `conn-interval`).
    private func fastInterval(_ command: [UInt8], unit i: Int) -> [UInt8] {
        guard options.timing == .fast, options.rules.isRelaxed(ReplayRules.connectionInterval),
              let fast = ConnectionIntervalRequest.requesting(ConnectionIntervalRequest.fastest, in: command) else { return command }
        if !ownCommands.fastIntervalNoted {
            ownCommands.fastIntervalNoted = true
            ownCommands.notes.append("--timing fast: connection intervals asked for as 7.5 ms (from #\(played.units[i].frame) on; the recorded ones with --timing original or --strict conn-interval)")
        }
        return fast
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
                add(Divergence(kind: .missing, frame: played.units[i].frame, step: played.stepOf[i], fromHost: true,
                               message: "\(played.views[i].title): the controller gave no \(what) within \(Self.seconds(options.timeout)); sent anyway",
                               differences: [], expected: nil, actual: nil), unit: i)
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

// MARK: connections

extension ReplayEngine {
    /// Assigns units to the recorded connections (see `ReplayConnections.of`).
    static func connections(_ views: [UnitView]) -> ([Int?], [ConnectionOutcome], [BDAddr?]) {
        var of = [Int?](repeating: nil, count: views.count)
        var list: [ConnectionOutcome] = []
        var peers: [BDAddr?] = []
        var open: [UInt16: Int] = [:]
        var everOpen: Set<UInt16> = []
        // Handles with data or events (not a command's answer) before any connection complete
        // opened them: links already open when the log starts. A command naming a handle is no
        // such evidence (a host may name one that is not there).
        var openedSoFar: Set<UInt16> = [], preLog: Set<UInt16> = []
        for v in views {
            if v.isConnectionComplete, !v.unit.fromHost, v.integer(.status) == 0, let h = v.handle { openedSoFar.insert(h); continue }
            if case .command = v.unit.content { continue }
            guard let h = v.handle, !openedSoFar.contains(h), v.category != .vendor, !v.isConnectionComplete,
                  v.eventCode != HCIEventCode.commandComplete, v.eventCode != HCIEventCode.commandStatus else { continue }
            preLog.insert(h)
        }
        var commandConnection: [UInt16: Int] = [:]   // opcode → connection of the command awaiting its answer
        for (i, v) in views.enumerated() {
            if v.isConnectionComplete, !v.unit.fromHost, v.integer(.status) == 0, let h = v.handle {
                everOpen.insert(h)
                let address = v.fields.lazy.compactMap { f -> BDAddr? in if f.topLevel, case let .address(a, _) = f.value { return a } else { return nil } }.first
                let peer = address?.description
                peers.append(address)
                open[h] = list.count
                of[i] = list.count
                list.append(ConnectionOutcome(index: list.count + 1, recordedHandle: h, liveHandle: nil, frame: v.unit.frame, peer: peer,
                                              replayed: false, steps: 0, stepsReplayed: 0, skipped: 0, divergences: 0, behaviourDivergences: 0, seconds: 0))
                continue
            }
            var handle = v.handle
            if case .command = v.unit.content {
                handle = v.fields.first { $0.id == .connectionHandle && $0.topLevel }.flatMap { if case let .integer(x, _) = $0.value { UInt16(truncatingIfNeeded: x) } else { nil } }
                if let h = handle, let k = open[h], let op = v.opcode { commandConnection[op] = k }
            }
            if handle == nil, let op = v.opcode, v.eventCode == HCIEventCode.commandStatus || v.eventCode == HCIEventCode.commandComplete {
                of[i] = commandConnection.removeValue(forKey: op)
                continue
            }
            // A link already open when the log starts (`preLog`), from its first unit: data, a
            // command or an event on it (vendor handles and failed attempts aside).
            if let h = handle, preLog.contains(h), open[h] == nil, !everOpen.contains(h), v.category != .vendor, !v.isConnectionComplete,
               v.eventCode != HCIEventCode.commandComplete, v.eventCode != HCIEventCode.commandStatus {
                everOpen.insert(h)
                open[h] = list.count
                peers.append(nil)
                var c = ConnectionOutcome(index: list.count + 1, recordedHandle: h, liveHandle: nil, frame: v.unit.frame, peer: nil,
                                          replayed: false, steps: 0, stepsReplayed: 0, skipped: 0, divergences: 0, behaviourDivergences: 0, seconds: 0)
                c.openBeforeLog = true
                list.append(c)
                if case .command = v.unit.content, let op = v.opcode { commandConnection[op] = list.count - 1 }
            }
            guard let h = handle, let k = open[h] else { continue }
            of[i] = k
            if v.isDisconnectionComplete { open[h] = nil }
        }
        return (of, list, peers)
    }

    /// Connection `k` did not come up live: what is still pending on it is skipped, and the rest
    /// of it will be as its turn comes.
    private func goDown(_ k: Int) {
        guard !connections.down.contains(k) else { return }
        connections.down.insert(k)
        for i in awaited.pending where played.state[i] == .pending && connections.of[i] == k {
            played.state[i] = .skipped
            connections.skipped(i, played.units[i], on: k, asStep: true)
        }
        awaited.dropSettled(played.state)
    }

    /// A unit of a connection that is down: neither sent nor waited for, counted as not replayed.
    private func skip(_ i: Int, connection k: Int) {
        let unit = played.units[i]
        if unit.fromHost { progress.step += 1 }
        if connections.absent.contains(k) || (!unit.fromHost && played.views[i].category.rule.map { options.rules.isRelaxed($0) } ?? false) {
            notCompared(i)
            if connections.absent.contains(k) { connections.skipped(i, unit, on: k, asStep: false) }
            return
        }
        played.state[i] = .skipped
        progress.total += unit.packets.count
        connections.skipped(i, unit, on: k, asStep: true)
    }

    /// The commands not sent: one note for the vendor commands (rule `vendor`), one per kind of
    /// controller configuration (rule `configuration`).
    private func noteWithheld() {
        if ownCommands.withheldVendor > 0 {
            ownCommands.notes.append("not sent: \(ownCommands.withheldVendor) vendor command\(ownCommands.withheldVendor == 1 ? "" : "s") (OGF 0x3F: the recorded controller's own), their answers not compared (rule vendor; --strict vendor sends them)")
        }
        for (op, frames) in ownCommands.withheld.sorted(by: { $0.value[0] < $1.value[0] }) {
            let name = HCIDecoder.commandName(HCIOpcode(rawValue: op))
            let at = frames.prefix(3).map { "#\($0)" }.joined(separator: ", ") + (frames.count > 3 ? ", …" : "")
            ownCommands.notes.append("not sent: \(name) ×\(frames.count) (\(at)): controller configuration the session does not need, its answer not compared (rule configuration; --strict configuration sends it)")
        }
    }

    /// One `skipped` divergence per connection that did not come up.
    private func reportSkipped() {
        for k in connections.down.sorted() {
            let c = connections.outcomes[k]
            let frames = connections.skippedFrames[k]?.sorted() ?? []
            if connections.absent.contains(k), c.openBeforeLog {
                let range = frames.first.map { first in frames.last == first ? ", #\(first)" : ", #\(first)–#\(frames.last ?? first)" } ?? ""
                ownCommands.notes.append("connection #\(c.index) (recorded handle 0x\(String(c.recordedHandle, radix: 16)), first packet #\(c.frame)) was open before the log starts (no connection complete: its device is not known): not played (\(c.skipped) packets\(range), not compared)")
                continue
            }
            if connections.absent.contains(k) {
                let range = frames.first.map { first in frames.last == first ? ", #\(first)" : ", #\(first)–#\(frames.last ?? first)" } ?? ""
                ownCommands.notes.append("connection #\(c.index) (recorded handle 0x\(String(c.recordedHandle, radix: 16)), #\(c.frame)) is to \(c.peer ?? "another device"), not the twin's device: not played (\(c.skipped) packets\(range), not compared)")
                continue
            }
            guard let first = frames.first, let last = frames.last else { continue }
            let range = first == last ? "#\(first)" : "#\(first)–#\(last)"
            add(Divergence(kind: .skipped, frame: first, step: connections.skippedUnits.filter { connections.of[$0] == k }.min().map { played.stepOf[$0] } ?? progress.step, fromHost: false,
                           message: "connection #\(c.index) (recorded handle 0x\(String(c.recordedHandle, radix: 16)), \(c.openBeforeLog ? "open before the log starts, first packet" : "connection complete") #\(c.frame)) did not come up: \(c.skipped) recorded packet\(c.skipped == 1 ? "" : "s") on it skipped (\(range))",
                           differences: [], expected: nil, actual: nil, classOverride: .behaviour), unit: nil, connection: k)
        }
    }

    private func add(_ d: Divergence, unit i: Int?, connection: Int? = nil) {
        var d = d
        if let k = connection ?? i.flatMap({ connections.of[$0] }) { d.connection = k + 1 }
        divergences.append(d)
    }

    private func connectionOutcomes() -> [ConnectionOutcome] {
        var out = connections.outcomes
        for i in played.units.indices {
            guard let k = connections.of[i] else { continue }
            let n = played.units[i].packets.count
            switch played.state[i] {
            case .matched: out[k].steps += n; out[k].stepsReplayed += n
            case .missing, .pending: out[k].steps += n
            case .skipped where connections.skippedUnits.contains(i): out[k].steps += n
            default: break
            }
        }
        for d in divergences {
            guard let k = d.connection.map({ $0 - 1 }), out.indices.contains(k) else { continue }
            out[k].divergences += 1
            if d.divergenceClass == .behaviour { out[k].behaviourDivergences += 1 }
        }
        for k in out.indices { if let t = connections.times[k] { out[k].seconds = t.last - t.first } }
        return out
    }
}

// MARK: what a recording that starts mid-session leaves out

extension ReplayEngine {
    static let ownAddressTypeOpcodes: Set<UInt16> = Set([
        HCIOpcode.leSetAdvertisingParameters, .leSetScanParameters, .leCreateConnection, .leSetExtendedScanParameters, .leExtendedCreateConnection,
    ].map(\.rawValue))
    /// The random static address the run gives a controller the recording never gave one.
    static let runRandomAddress = BDAddr(0xC0DE_5EED_0001)

    /// A command that uses the controller's random address (Own Address Type random or
    /// resolvable-or-random, Core v5.4 Vol 4 Part E 7.8.5/7.8.10/7.8.12) when the recording never
    /// set one (it started mid-session, after the host's LE Set Random Address): a live
    /// controller refuses it (7.8.10: Invalid HCI Command Parameters), so the run sets a random
    /// static address first, once, and says so.
    /// LE (Extended) Create Connection with the filter accept list (Initiator Filter Policy 1,
    /// Core v5.4 Vol 4 Part E 7.8.12) when the peer of the connection that follows is not on the
    /// list as the run filled it (the host put it there before the log starts): the run adds the
    /// (live) peer first, and says so.
    fileprivate func prepareAcceptList(_ i: Int) throws(TransportError) {
        guard let op = played.views[i].opcode else { return }
        guard op == HCIOpcode.leCreateConnection.rawValue || op == HCIOpcode.leExtendedCreateConnection.rawValue,
              let policy = played.views[i].fields.first(where: { $0.id == .initiatorFilterPolicy }), case let .integer(p, _) = policy.value, p == 1,
              let j = played.units.indices[(i + 1)...].first(where: { played.views[$0].isConnectionComplete }),
              let k = connections.of[j], !connections.absent.contains(k), let recorded = connections.peers[k] else { return }
        guard !attempts.acceptListed.contains(recorded) else { return }
        attempts.acceptListed.insert(recorded)
        let address = maps.live(recorded)
        let recordedType = played.views[j].fields.first { $0.id == .peerAddressType }.flatMap { f -> UInt8? in
            if case let .integer(v, _) = f.value { return UInt8(truncatingIfNeeded: v) & 1 } else { return nil } } ?? 0
        let type = maps.addressTypes[recorded] ?? recordedType
        guard let bytes = try? HCICommandEncoding.command(.leAddDeviceToFilterAcceptList, [HCIKey.addressType: .int(UInt64(type)), HCIKey.address: .address(address)]) else { return }
        ownCommands.notes.append("the recording connects through the filter accept list to a device it never put there (before the log starts): the run added \(address) first (before #\(played.units[i].frame))")
        try sendOwnCommand(.leAddDeviceToFilterAcceptList, bytes, step: i, what: "LE Add Device To Filter Accept List")
    }

    /// LE (Extended) Create Connection whose connection complete (the next one recorded) was a
    /// success with a device that is there: `beforeConnecting` with that connection's number.
    fileprivate func announceConnecting(_ i: Int) {
        guard let op = played.views[i].opcode, Self.connectOpcodes.contains(op),
              let j = played.units.indices[(i + 1)...].first(where: { played.views[$0].isConnectionComplete }),
              let k = connections.of[j], !connections.absent.contains(k) else { return }
        beforeConnecting(connections.number(k))
    }

    /// Remembers whether the connection command `i` names a device that is not there (`--peer`).
    fileprivate func noteTarget(_ i: Int) {
        guard let only = options.advertisers, let op = played.views[i].opcode, Self.connectOpcodes.contains(op) || op == HCIOpcode.createConnectionCancel.rawValue
                || op == HCIOpcode.leCreateConnectionCancel.rawValue else { return }
        var target = played.views[i].fields.lazy.compactMap { f -> BDAddr? in if f.topLevel, case let .address(a, _) = f.value { return a } else { return nil } }.first
        // Through the accept list (no address, or none given): the device of the connection
        // complete that followed in the recording.
        if target == nil || target == BDAddr(0), let j = played.units.indices[(i + 1)...].prefix(options.lookahead).first(where: { played.views[$0].isConnectionComplete }) {
            target = Self.peer(played.views[j])
        }
        if let target, target != BDAddr(0), !only.contains(target) { attempts.absentTargets.insert(op) } else { attempts.absentTargets.remove(op) }
    }

    /// The event masks an Android host sets (Set Event Mask with LE Meta on, bit 61; LE Set Event
    /// Mask with the connection, advertising report, LTK request, data length, PHY and channel
    /// selection events), as recorded in the field logs here.
    static let eventMasks: [(HCIOpcode, UInt64)] = [(.setEventMask, 0x3DBF_FFFF_FFFF_FFFF), (.leSetEventMask, 0x0000_0007_4D02_FE7F)]

    /// Before the first command of a recording that starts mid-session: a host that never resets
    /// the controller nor sets an event mask in the log set them before it started; a fresh
    /// controller has the default masks (Core v5.4 Vol 4 Part E 7.3.1: no LE Meta event, so no LE
    /// connection complete at all; 7.8.1), so the run sets the missing ones first, once, and says so.
    fileprivate func prepareEventMasks(_ i: Int) throws(TransportError) {
        guard !ownCommands.eventMasksChecked else { return }
        ownCommands.eventMasksChecked = true
        let sent = Set(played.views.lazy.filter(\.unit.fromHost).compactMap(\.opcode))
        guard !sent.contains(HCIOpcode.reset.rawValue) else { return }
        for (opcode, mask) in Self.eventMasks where !sent.contains(opcode.rawValue) {
            guard let bytes = try? HCICommandEncoding.command(opcode, [opcode == .setEventMask ? HCIKey.eventMask : HCIKey.leEventMask: .int(mask)]) else { continue }
            ownCommands.notes.append("the recording never sets \(opcode == .setEventMask ? "the event mask" : "the LE event mask") (it starts after the host did): the run set it first (0x\(String(mask, radix: 16)), before #\(played.units[i].frame))")
            try sendOwnCommand(opcode, bytes, step: i, what: opcode == .setEventMask ? "Set Event Mask" : "LE Set Event Mask")
        }
    }

    /// Before the first packet of the twin's link that was open before the log starts: the run
    /// connects to the twin (LE Create Connection to its address, 7.5 ms, Core v5.4 Vol 4 Part E
    /// 7.8.12) and maps the recorded handle to the live one; the event masks first, as the log
    /// has none. Its answers are not compared; a link that does not come up is `skipped`.
    fileprivate func connectOpenBeforeLog(_ i: Int, connection k: Int) throws(TransportError) {
        guard let t = options.twinOpenBeforeLog, connections.times[k] == nil else { return }
        try prepareEventMasks(i)
        beforeConnecting(connections.number(k))
        let address = maps.live(t.address)
        let bytes: [UInt8]
        do {
            bytes = try HCICommandEncoding.command(.leCreateConnection, [
                HCIKey.leScanInterval: .int(0x60), HCIKey.leScanWindow: .int(0x60), HCIKey.initiatorFilterPolicy: .int(0),
                HCIKey.peerAddressType: .int(UInt64(maps.addressTypes[t.address] ?? 1)), HCIKey.peerAddress: .address(address),
                HCIKey.ownAddressType: .int(0), HCIKey.connectionIntervalMin: .int(6), HCIKey.connectionIntervalMax: .int(6),
                HCIKey.maxLatency: .int(0), HCIKey.supervisionTimeout: .int(0x01F4), HCIKey.minCELength: .int(0),
                HCIKey.maxCELength: .int(0)])
        } catch {
            throw TransportError(.io, "cannot build LE Create Connection: \(error)")
        }
        ownCommands.notes.append("connection #\(connections.outcomes[k].index) (recorded handle 0x\(String(connections.outcomes[k].recordedHandle, radix: 16))) was open before the log starts: the run connected to the twin (\(address)) before #\(played.units[i].frame)")
        attempts.ownConnecting = k
        try sendOwnCommand(.leCreateConnection, bytes, step: i, what: "LE Create Connection")
        try waitFor("the connection complete of the run's own LE Create Connection", step: i) { $0.attempts.ownConnecting == nil }
        if connections.outcomes[k].liveHandle == nil { goDown(k) }
    }

    /// Sends a command of the run's own (not recorded) and waits for its Command Complete /
    /// Status, which is swallowed (`ownCommand`), not compared.
    fileprivate func sendOwnCommand(_ opcode: HCIOpcode, _ bytes: [UInt8], step i: Int, what: String) throws(TransportError) {
        try waitFor("a command credit (Num_HCI_Command_Packets)", step: i) { $0.flow.commandCredits > 0 }
        ownCommands.awaited = opcode.rawValue
        try transmit(H4Packet(.command, bytes))
        flow.sentCommand()
        try waitFor("an answer to the run's own \(what)", step: i) { $0.ownCommands.awaited == nil }
    }

    static let leConnectOpcodes: Set<UInt16> = [HCIOpcode.leCreateConnection.rawValue, HCIOpcode.leExtendedCreateConnection.rawValue,
                                                HCIOpcode.leExtendedCreateConnectionV2.rawValue]

    /// Under `--peer`: the recorded attempt ended with a connection to another device than the
    /// twin's (through the accept list, say), which is not on the radio, so live the attempt is
    /// still open, and the controller would refuse the host's next one (Command Disallowed, Core
    /// v5.4 Vol 4 Part E 7.8.12). The run cancels it (LE Create Connection Cancel, 7.8.13) where
    /// the recording had its connection complete, swallows the answers, and says so.
    fileprivate func cancelAbsentAttempt(_ i: Int, connection k: Int) throws(TransportError) {
        guard attempts.leOpen, !played.units[i].fromHost,
              let bytes = try? HCICommandEncoding.command(.leCreateConnectionCancel) else { return }
        attempts.leOpen = false
        ownCommands.notes.append("connection #\(connections.outcomes[k].index) (#\(played.units[i].frame)) was to \(connections.outcomes[k].peer ?? "another device"), which is not there: the run cancelled the attempt still open live (LE Create Connection Cancel)")
        attempts.cancelled = true
        try sendOwnCommand(.leCreateConnectionCancel, bytes, step: i, what: "LE Create Connection Cancel")
        try waitFor("the connection complete of the attempt the run cancelled", step: i) { !$0.attempts.cancelled }
    }

    fileprivate func prepareRandomAddress(_ i: Int) throws(TransportError) {
        guard let op = played.views[i].opcode else { return }
        if op == HCIOpcode.leSetRandomAddress.rawValue { attempts.randomAddressSet = true; return }
        guard !attempts.randomAddressSet, Self.ownAddressTypeOpcodes.contains(op),
              let type = played.views[i].fields.first(where: { $0.id == .ownAddressType }),
              case let .integer(t, _) = type.value, t == 1 || t == 3 else { return }
        attempts.randomAddressSet = true
        guard let bytes = try? HCICommandEncoding.command(.leSetRandomAddress, [HCIKey.randomAddress: .address(Self.runRandomAddress)]) else { return }
        ownCommands.notes.append("the recording uses a random own address it never set (it starts after the host's LE Set Random Address): the run set \(Self.runRandomAddress) first (before #\(played.units[i].frame))")
        try sendOwnCommand(.leSetRandomAddress, bytes, step: i, what: "LE Set Random Address")
    }
}
