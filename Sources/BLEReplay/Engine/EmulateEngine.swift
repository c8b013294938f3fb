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

    let script: Script
    let views: [UnitView]
    let transport: HCITransport
    let options: ReplayOptions
    let capture: LiveCapture?
    private let comparator: Comparator
    private let stepOf: [Int]
    private var state: [State]
    private var inbox: [UnitView] = []
    private var host = UnitBuilder()
    private var hostCount = 0
    /// The unit being worked on.
    private var current = 0
    private var pacer: Pacer
    private var divergences: [Divergence] = []

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
            pacer.start(origin: script.units.first?.timestamp)
            for i in script.units.indices where state[i] == .waiting {
                current = i
                if script.units[i].fromHost { try expectHost(i) } else { try play(i) }
            }
            linger()
        } catch let error where error.kind == .disconnected {
            hostLeft()
        } catch {
            failure = error
        }
        var notes = script.notes
        for p in transport.framingProblems { notes.append("\(transport.name): \(p)") }
        func packets(_ states: Set<State>) -> Int {
            script.units.indices.filter { states.contains(state[$0]) }.reduce(0) { $0 + script.units[$1].packets.count }
        }
        var outcome = ReplayOutcome(recording: script.path, peer: transport.name, steps: steps(), divergences: divergences,
                                    replayed: packets([.done]), total: packets([.done, .missing]), notCompared: packets([.skipped]),
                                    error: failure, notes: notes, seconds: Clock.now() - start)
        outcome.lastStep = stepOf.indices.contains(current) ? stepOf[current] : 0
        return outcome
    }

    private func steps() -> [ReplayStep] {
        var out = [ReplayStep(index: 0, frame: nil, title: "start: controller packets before the first host packet")]
        for (i, u) in script.units.enumerated() where u.fromHost {
            out.append(ReplayStep(index: out.count, frame: u.frame, title: views[i].title))
        }
        return out
    }

    /// Plays a recorded controller → host unit.
    private func play(_ i: Int) throws(TransportError) {
        let unit = script.units[i]
        let due = pacer.due(unit.timestamp)
        while Clock.now() < due, try receive(until: due) {}   // the host's packets queue up meanwhile
        for packet in unit.packets { try transmit(packet) }
        state[i] = .done
        pacer.sent(unit.timestamp)
    }

    /// Waits for the host to send recorded unit `i`.
    private func expectHost(_ i: Int) throws(TransportError) {
        let expected = views[i]
        let key = MatchKey(expected, handle: { $0 })
        let deadline = Clock.now() + options.timeout
        while true {
            guard let v = try nextHostUnit(until: deadline) else {
                state[i] = .missing
                divergences.append(Divergence(kind: .missing, frame: expected.unit.frame, step: stepOf[i], fromHost: true,
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
        state[i] = .done
        let differences = comparator.differences(expected: views[i], actual: v, maps: LinkMaps())
        guard !differences.isEmpty else { return }
        divergences.append(Divergence(kind: .mismatch, frame: views[i].unit.frame, step: stepOf[i], fromHost: true,
                                      message: "\(views[i].title): the host sent it differently", differences: differences,
                                      expected: views[i].unit, actual: v.unit))
    }

    /// A recorded host unit a little ahead with the same key.
    private func laterHostUnit(after i: Int, key: MatchKey) -> Int? {
        let end = min(script.units.count, i + 1 + options.lookahead)
        guard i + 1 < end else { return nil }
        return ((i + 1) ..< end).first { script.units[$0].fromHost && state[$0] == .waiting && MatchKey(views[$0], handle: { $0 }) == key }
    }

    /// The host skipped recorded units `i..<k`: its packets are missing, the controller's answers to them are not played.
    private func skip(from i: Int, to k: Int) {
        for j in i ..< k where state[j] == .waiting {
            if script.units[j].fromHost {
                state[j] = .missing
                divergences.append(Divergence(kind: .missing, frame: script.units[j].frame, step: stepOf[j], fromHost: true,
                                              message: "\(views[j].title): the host skipped it", differences: [],
                                              expected: script.units[j], actual: nil))
            } else {
                state[j] = .skipped
            }
        }
    }

    private func unexpected(_ v: UnitView) {
        if !options.rules.isRelaxed(ReplayRules.unexpected) {
            divergences.append(Divergence(kind: .unexpected, frame: nil, step: stepOf[current], fromHost: true,
                                          message: "\(v.title): not in the recording", differences: [], expected: nil, actual: v.unit))
        }
        guard case .command = v.unit.content, let opcode = v.opcode else { return }
        try? transmit(response(to: opcode))
    }

    /// The recorded Command Complete / Status for `opcode`, or Command Complete with Unknown HCI
    /// Command (Core v5.4 Vol 4 Part E 7.7.14; error code 0x01, Vol 1 Part F 1.1).
    private func response(to opcode: UInt16) -> H4Packet {
        if let recorded = views.first(where: { !$0.unit.fromHost && $0.opcode == opcode && $0.eventCode != nil }),
           let packet = recorded.unit.packets.first {
            return packet
        }
        return H4Packet(.event, [HCIEventCode.commandComplete, 4, 1, UInt8(truncatingIfNeeded: opcode), UInt8(truncatingIfNeeded: opcode >> 8), 0x01])
    }

    /// The host closed the link: recorded host packets still to come are one divergence.
    private func hostLeft() {
        let left = script.units.indices.filter { script.units[$0].fromHost && state[$0] == .waiting }
        guard let first = left.first else { return }
        let packets = left.reduce(0) { $0 + script.units[$1].packets.count }
        divergences.append(Divergence(kind: .endedEarly, frame: script.units[first].frame, step: stepOf[first], fromHost: true,
                                      message: "the host disconnected with \(left.count) recorded host unit\(left.count == 1 ? "" : "s") (\(packets) packets) still to come, first: \(views[first].title)",
                                      differences: [], expected: script.units[first], actual: nil))
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
        hostCount += 1
        inbox += host.push(packet, fromHost: true, frame: hostCount, timestamp: Clock.wallMicros()).map(UnitView.init)
        return true
    }
}
