import BLEProtocol

/// Acts as the recorded controller for a live host (`bleanalyze emulate`).
///
/// The roles of `ReplayEngine` swap: recorded controller → host units are played (as recorded:
/// handles, addresses, Num_HCI_Command_Packets, Number Of Completed Packets), recorded host units
/// are expected from the host and compared with the same `Comparator`. When the host sends
/// something else:
/// - if it is a host packet recorded a little later (the host skipped some), the skipped host
///   packets are `missing` and the controller packets between are not played;
/// - otherwise it is `unexpected`; a command still gets an answer (the recorded response to that
///   opcode if the recording has one, else Command Complete with Unknown HCI Command, 0x01) so
///   the host does not stall.
/// It ends when the recording is exhausted or the host disconnects.
public final class EmulateEngine {
    enum State { case waiting, done, skipped, missing }

    let transport: HCITransport
    let options: ReplayOptions
    let capture: LiveCapture?
    /// The recording, its units' states and the pacer (`PlayedScript`).
    private var played: PlayedScript<State>
    private var inbox: [UnitView] = []
    private var host = LiveUnits(fromHost: true)
    /// The unit being worked on.
    private var current = 0
    private var divergences: [Divergence] = []

    public init(script: Script, transport: HCITransport, options: ReplayOptions, capture: LiveCapture? = nil) {
        self.played = PlayedScript(script, options: options, initial: .waiting)
        self.transport = transport
        self.options = options
        self.capture = capture
    }

    /// Runs until the recording is exhausted or the host leaves.
    /// - Parameter firstPacketTimeout: seconds to wait for the host's first packet (the controller
    ///   packets recorded before it are played once it arrived, so a host that flushes its input
    ///   when it opens the port still gets them).
    public func run(firstPacketTimeout: Double) -> ReplayOutcome {
        let start = Clock.now()
        var failure: TransportError?
        do throws(TransportError) {
            guard let first = try nextHostUnit(until: Clock.now() + firstPacketTimeout) else {
                throw TransportError(.timeout, "\(transport.name): no host packet within \(ReplayEngine.seconds(firstPacketTimeout))")
            }
            inbox.append(first)
            played.pacer.start(origin: played.units.first?.timestamp)
            for i in played.units.indices where played.state[i] == .waiting {
                current = i
                if played.units[i].fromHost { try expectHost(i) } else { try play(i) }
            }
            linger()
        } catch let error where error.kind == .disconnected {
            hostLeft()
        } catch {
            failure = error
        }
        var notes = played.script.notes
        for p in transport.framingProblems { notes.append("\(transport.name): \(p)") }
        func packets(_ states: Set<State>) -> Int {
            played.units.indices.filter { states.contains(played.state[$0]) }.reduce(0) { $0 + played.units[$1].packets.count }
        }
        var outcome = ReplayOutcome(recording: played.script.path, peer: transport.name, steps: played.steps(), divergences: divergences,
                                    replayed: packets([.done]), total: packets([.done, .missing]), notCompared: packets([.skipped]),
                                    error: failure, notes: notes, seconds: Clock.now() - start)
        outcome.lastStep = played.stepOf.indices.contains(current) ? played.stepOf[current] : 0
        return outcome
    }

    /// Plays a recorded controller → host unit.
    private func play(_ i: Int) throws(TransportError) {
        let unit = played.units[i]
        let due = played.pacer.due(unit.timestamp)
        while Clock.now() < due, try receive(until: due) {}   // the host's packets queue up meanwhile
        for packet in unit.packets { try transmit(packet) }
        played.state[i] = .done
        played.pacer.sent(unit.timestamp)
    }

    /// Waits for the host to send recorded unit `i`.
    private func expectHost(_ i: Int) throws(TransportError) {
        let expected = played.views[i]
        let key = MatchKey(expected, handle: { $0 })
        let deadline = Clock.now() + options.timeout
        while true {
            guard let v = try nextHostUnit(until: deadline) else {
                played.state[i] = .missing
                divergences.append(Divergence(kind: .missing, frame: expected.unit.frame, step: played.stepOf[i], fromHost: true,
                                              message: "\(expected.title): the host did not send it within \(ReplayEngine.seconds(options.timeout))",
                                              differences: [], expected: expected.unit, actual: nil))
                return
            }
            let liveKey = MatchKey(v, handle: { $0 })
            if liveKey == key { return matched(i, v) }
            if let k = laterHostUnit(after: i, key: liveKey) {
                skip(from: i, to: k)
                return matched(k, v)
            }
            unexpected(v)
        }
    }

    private func matched(_ i: Int, _ v: UnitView) {
        played.state[i] = .done
        let differences = played.comparator.differences(expected: played.views[i], actual: v, maps: LinkMaps())
        guard !differences.isEmpty else { return }
        divergences.append(Divergence(kind: .mismatch, frame: played.views[i].unit.frame, step: played.stepOf[i], fromHost: true,
                                      message: "\(played.views[i].title): the host sent it differently", differences: differences,
                                      expected: played.views[i].unit, actual: v.unit))
    }

    /// A recorded host unit a little ahead with the same key.
    private func laterHostUnit(after i: Int, key: MatchKey) -> Int? {
        let end = min(played.units.count, i + 1 + options.lookahead)
        guard i + 1 < end else { return nil }
        return ((i + 1) ..< end).first { played.units[$0].fromHost && played.state[$0] == .waiting && MatchKey(played.views[$0], handle: { $0 }) == key }
    }

    /// The host skipped recorded units `i..<k`: its packets are missing, the controller's answers to them are not played.
    private func skip(from i: Int, to k: Int) {
        for j in i ..< k where played.state[j] == .waiting {
            if played.units[j].fromHost {
                played.state[j] = .missing
                divergences.append(Divergence(kind: .missing, frame: played.units[j].frame, step: played.stepOf[j], fromHost: true,
                                              message: "\(played.views[j].title): the host skipped it", differences: [],
                                              expected: played.units[j], actual: nil))
            } else {
                played.state[j] = .skipped
            }
        }
    }

    private func unexpected(_ v: UnitView) {
        if !options.rules.isRelaxed(ReplayRules.unexpected) {
            divergences.append(Divergence(kind: .unexpected, frame: nil, step: played.stepOf[current], fromHost: true,
                                          message: "\(v.title): not in the recording", differences: [], expected: nil, actual: v.unit))
        }
        guard case .command = v.unit.content, let opcode = v.opcode else { return }
        try? transmit(response(to: opcode))
    }

    /// The recorded Command Complete / Status for `opcode`, or Command Complete with Unknown HCI
    /// Command (Core v5.4 Vol 4 Part E 7.7.14; error code 0x01, Vol 1 Part F 1.1).
    private func response(to opcode: UInt16) -> H4Packet {
        if let recorded = played.views.first(where: { !$0.unit.fromHost && $0.opcode == opcode && $0.eventCode != nil }),
           let packet = recorded.unit.packets.first {
            return packet
        }
        return H4Packet(.event, [HCIEventCode.commandComplete, 4, 1, UInt8(truncatingIfNeeded: opcode), UInt8(truncatingIfNeeded: opcode >> 8), 0x01])
    }

    /// The host closed the link: recorded host packets still to come are one divergence.
    private func hostLeft() {
        let left = played.units.indices.filter { played.units[$0].fromHost && played.state[$0] == .waiting }
        guard let first = left.first else { return }
        let packets = left.reduce(0) { $0 + played.units[$1].packets.count }
        divergences.append(Divergence(kind: .endedEarly, frame: played.units[first].frame, step: played.stepOf[first], fromHost: true,
                                      message: "the host disconnected with \(left.count) recorded host unit\(left.count == 1 ? "" : "s") (\(packets) packets) still to come, first: \(played.views[first].title)",
                                      differences: [], expected: played.units[first], actual: nil))
    }

    /// The recording is exhausted: read what the host still sends (briefly) so closing does not
    /// reset the connection under data it has not read yet.
    private func linger() {
        let deadline = Clock.now() + min(options.timeout, 0.5)
        while Clock.now() < deadline {
            guard let packet = try? transport.receive(timeout: deadline - Clock.now()) else { return }
            capture?.log(packet, outgoing: false)
        }
    }

    private func transmit(_ packet: H4Packet) throws(TransportError) {
        try transport.send(packet)
        capture?.log(packet, outgoing: true)
    }

    /// The next complete host unit (queued ones first), or nil at the deadline.
    private func nextHostUnit(until deadline: Double) throws(TransportError) -> UnitView? {
        while inbox.isEmpty {
            guard try receive(until: deadline) else { return nil }
        }
        return inbox.removeFirst()
    }

    /// Reads one host packet into the inbox (ACL reassembled); false at the deadline.
    private func receive(until deadline: Double) throws(TransportError) -> Bool {
        let remaining = deadline - Clock.now()
        guard remaining > 0, let packet = try transport.receive(timeout: remaining) else { return false }
        capture?.log(packet, outgoing: false)
        inbox += host.push(packet)
        return true
    }
}
