import BLEBytes
import BLEProtocol

/// Plays the recorded peer device on a controller of its own (`bleanalyze peer`): sets the
/// controller up as that device (`PeerSetup.swift`), advertises, accepts the connection, and
/// answers the central as the recording's device did (`TwinStory`, `AttributeTable`,
/// `PeerRules.swift`). Ends when the central disconnects, at the overall time limit, or when
/// `shouldStop` says so; never throws: a transport failure is in the outcome.
public final class PeerEngine {
    let twin: TwinRecording
    let transport: HCITransport
    let options: ReplayOptions
    let capture: LiveCapture?
    /// The overall time limit, seconds.
    let limit: Double
    /// Called once advertising is on, with `advertising as ADDR`.
    public var announce: (String) -> Void = { _ in }
    /// Polled between packets (an in-process twin is stopped by its replay).
    public var shouldStop: () -> Bool = { false }
    /// How many connections the twin may accept by now (polled after a disconnection, before it
    /// advertises again): beside a replay, the connections whose recorded attempt the replayed
    /// host has made, so the attempts that failed in the recording (the device was away) fail
    /// live too. Nil (`peer` alone, a central of its own): after each disconnection the twin
    /// advertises again while the recording has connections left, and ends when the central does
    /// not come back within `reconnectGrace` (or after the last one).
    public var connectionsAllowed: (() -> Int)?
    private var readvertisePending = false
    /// `peer` alone, after a disconnection with recorded connections left: when to stop waiting
    /// for the central to connect again.
    private var reconnectDeadline: Double?
    /// Seconds `peer` alone waits for its central to connect again (a test's central is a new
    /// process: 5 s was too short on a loaded machine).
    static let reconnectGrace: Double = 15
    /// The live central replays the recorded LE legacy pairing: the recorded answers are sent.
    var legacyReplay = false

    var notes: [String] = []
    var aclMaxLength = 27
    var aclCredits = 1
    var extendedAdvertising = false
    private(set) var address: BDAddr?
    private(set) var addressType: LEAddressType?

    /// The live connection.
    var liveHandle: UInt16?
    var liveMTU = ATT.defaultLEMTU
    private var assembler = ACLAssembler()
    private var liveCount = 0
    /// Next story step a live PDU may match, and the step the story is at.
    var next = 0
    var position = -1
    private var matched: [Bool]
    /// What to send and when (seconds on `Clock`), in order.
    private var outbox: [(due: Double, pdu: [UInt8])] = []
    private var inFlight = 0
    var divergences: [Divergence] = []
    /// Prepared writes queued (Core v5.4 Vol 3 Part F 3.4.6).
    var prepared: [(handle: UInt16, offset: UInt16, part: [UInt8])] = []
    private var disconnected = false
    /// The link is encrypted; SMP key distribution (codes 0x06–0x0A) waits for it (Core v5.4 Vol 3
    /// Part H 3.6.1: keys are distributed over the encrypted link).
    private var encrypted = false
    private var held: [(pdu: [UInt8], timestamp: Int64)] = []
    /// The live central (from its Connection Complete) and the twin's own address, for pairing.
    var centralAddress: (address: BDAddr, type: UInt8)?
    /// A live central's legacy pairing in progress (`PeerPairing.swift`).
    var pairing: LegacyPairingState?
    /// A live central's LE Secure Connections pairing in progress (`PeerSecureConnections.swift`).
    var secure: SecureConnectionsState?
    /// Why the twin could not pair with the live central, for the divergence of its refusal.
    var pairingRefusal: String?
    private var timedOut = false
    /// Live connections accepted so far (the story's recorded connections are played in turn).
    private var connectionsAccepted = 0
    /// When the twin ends the current link as the recorded device did (seconds on `Clock`), once
    /// the story of that connection is played.
    private var endDue: Double?
    private var endSent = false

    public init(twin: TwinRecording, transport: HCITransport, options: ReplayOptions, limit: Double, capture: LiveCapture? = nil) {
        self.twin = twin
        self.transport = transport
        self.options = options
        self.capture = capture
        self.limit = limit
        self.matched = Array(repeating: false, count: twin.story.steps.count)
    }

    var connectionsAcceptedCount: Int { connectionsAccepted }

    /// The story steps a live PDU may match: those of the recorded connection being played (a
    /// request the central makes again on a later connection is that connection's).
    var storyEnd: Int { twin.story.connectionEnd(max(0, min(connectionsAccepted, twin.story.connectionStarts.count) - 1)) }

    /// The device ended the recorded connection (not the central): once the central did what it
    /// did on it and the device's answers are out, the twin disconnects (Remote User Terminated,
    /// Core v5.4 Vol 4 Part E 7.1.6), after the recorded pause (at most 0.5 s under `fast`) and once
    /// its controller reported every ACL packet sent (Number Of Completed Packets, 7.7.19): a
    /// Disconnect with data still queued in the controller may drop it, and a loaded CI machine
    /// then lost the device's last notifications before the link ended.
    private func endLinkIfRecorded(now: Double) throws(TransportError) {
        guard let handle = liveHandle, !endSent, outbox.isEmpty, inFlight == 0, connectionsAccepted > 0 else { return }
        let k = connectionsAccepted - 1
        guard k < twin.deviceEnds.count, let pause = twin.deviceEnds[k] else { return }
        guard next >= twin.story.connectionEnd(k) else { return }
        let seconds = Double(pause) / 1e6
        let due = endDue ?? now + (options.timing == .original ? seconds / max(options.speed, 0.001) : min(seconds, 0.5))
        endDue = due
        guard now >= due else { return }
        endSent = true
        notes.append("connection \(connectionsAccepted): the device ended it in the recording; the twin disconnects (Remote User Terminated)")
        try sendCommand(.disconnect, [HCIKey.connectionHandle: .int(UInt64(handle)), HCIKey.reason: .int(0x13)])
    }

    /// Per-link state back to a fresh connection's.
    func resetLink() {
        liveMTU = ATT.defaultLEMTU
        assembler = ACLAssembler()
        outbox.removeAll()
        inFlight = 0
        encrypted = false
        held.removeAll()
        prepared.removeAll()
        pairing = nil
        secure = nil
        pairingRefusal = nil
        endDue = nil
        endSent = false
        legacyReplay = false
    }

    /// The address the twin advertises with (after `run` set the controller up).
    public var advertisedAddress: BDAddr? { address }
    public var advertisedAddressType: LEAddressType? { addressType }

    public func run() -> ReplayOutcome {
        let start = Clock.now()
        var failure: TransportError?
        do throws(TransportError) {
            let (a, t) = try setUp()
            (address, addressType) = (a, t)
            // Beside a replay, advertising starts when the replayed host makes the attempt that
            // connected in the recording (earlier ones failed there: the device was away).
            readvertisePending = connectionsAllowed != nil
            announce("advertising as \(a)" + (t == .randomDevice ? " (random)" : " (public)"))
            let end = start + limit
            while !disconnected {
                if shouldStop() { break }
                let now = Clock.now()
                if now >= end { timedOut = true; break }
                try flush(now: now)
                try endLinkIfRecorded(now: now)
                if readvertisePending, connectionsAllowed.map({ $0() > connectionsAccepted }) ?? true {
                    readvertisePending = false
                    try readvertise()
                }
                // `peer` alone: a central that does not come back ends the run.
                if let deadline = reconnectDeadline, liveHandle == nil, now >= deadline {
                    notes.append("the central did not connect again within \(ReplayEngine.seconds(Self.reconnectGrace)) after connection \(connectionsAccepted) of \(twin.connectionCount)")
                    break
                }
                let nextDue = outbox.first.map { $0.due - now } ?? 0.1
                let wait = max(0.001, min(0.1, nextDue, end - now))
                if let packet = try transport.receive(timeout: wait) { try handle(packet) }
            }
        } catch {
            failure = error
        }
        if timedOut { notes.append("stopped at the time limit (\(ReplayEngine.seconds(limit))) with the connection \(liveHandle == nil ? "never made" : "still open")") }
        reportUnplayed()
        var notes = self.notes
        for p in transport.framingProblems { notes.append("\(transport.name): \(p)") }
        let steps = [ReplayStep(index: 0, frame: nil, title: "set up, advertise and accept the connection")]
            + twin.story.steps.enumerated().map { ReplayStep(index: $0.offset + 1, frame: $0.element.unit.frame, title: "central: " + $0.element.unit.title) }
        let played = twin.story.steps.indices.filter { matched[$0] }.reduce(0) { $0 + twin.story.steps[$1].unit.packets.count }
        let total = twin.story.steps.reduce(0) { $0 + $1.unit.packets.count }
        var outcome = ReplayOutcome(recording: twin.path, peer: transport.name, steps: steps, divergences: divergences, replayed: played,
                                    total: total, notCompared: 0, error: failure, notes: notes, seconds: Clock.now() - start)
        outcome.lastStep = max(0, position + 1)
        return outcome
    }

    // MARK: packets from the controller

    private func handle(_ packet: H4Packet) throws(TransportError) {
        capture?.log(packet, outgoing: false)
        liveCount += 1
        switch packet.type {
        case .event:
            if let event = Self.decode(packet) { try self.event(event) }
        case .acl:
            for o in assembler.push(packet, frame: liveCount) where o.handle == liveHandle {
                if let pdu = o.pdu { try central(pdu) }
            }
        default: break
        }
    }

    /// What the twin reads of a controller's event (decoded by BLEProtocol's `HCIEvent`).
    enum Event {
        case connected(handle: UInt16, central: BDAddr, centralType: UInt8)
        case longTermKeyRequest(handle: UInt16, random: UInt64, ediv: UInt16)
        case encrypted
        case disconnected(handle: UInt16)
        /// ACL packets the controller is done with (Number Of Completed Packets, all handles).
        case completed(Int)
    }

    /// The event the twin acts on, or nil (other events, malformed ones).
    static func decode(_ packet: H4Packet) -> Event? {
        packet.bytes.withUnsafeBytes { raw -> Event? in
            var r = ByteReader(raw)
            guard let event = try? HCIEvent.decode(&r) else { return nil }
            switch event {
            case let .connectionComplete(c) where c.isLE && c.status == .success:
                return .connected(handle: c.handle, central: c.peerAddress, centralType: (c.peerAddressType?.rawValue ?? 0) & 1)
            case let .longTermKeyRequest(handle, random, ediv):
                return .longTermKeyRequest(handle: handle, random: random, ediv: ediv)
            case let .encryptionChange(status, _, enabled, _, _) where status == .success && enabled:
                return .encrypted
            case let .disconnectionComplete(_, handle, _):
                return .disconnected(handle: handle)
            case let .numberOfCompletedPackets(pairs):
                var n = 0
                pairs.forEach(in: raw, base: 0) { _, completed in n += Int(completed) }
                return .completed(n)
            default:
                return nil
            }
        }
    }

    private func event(_ event: Event) throws(TransportError) {
        switch event {
        case let .connected(handle, central, type):
            guard liveHandle == nil else { return }
            liveHandle = handle
            reconnectDeadline = nil
            centralAddress = (central, type)
            // The k-th live connection plays the k-th recorded one: the story moves to its start
            // (what the central did not do on the previous one is reported as not done again).
            let k = min(connectionsAccepted, twin.story.openings.count - 1)
            connectionsAccepted += 1
            next = max(next, twin.story.connectionStarts[k])
            let opening = twin.story.openings[k]
            schedule(opening, reference: opening.first?.timestamp ?? 0)
        case let .longTermKeyRequest(handle, random, ediv):
            try longTermKeyRequest(handle: handle, random: (0 ..< 8).map { UInt8(truncatingIfNeeded: random >> UInt64(8 * $0)) }, ediv: ediv)
        case .encrypted:
            guard !encrypted else { return }
            encrypted = true
            let release = held + pairingKeyDistribution()
            held.removeAll()
            schedule(release, reference: release.first?.timestamp ?? 0)
        case let .disconnected(handle):
            guard handle == liveHandle else { return }
            if connectionsAccepted < twin.connectionCount {
                liveHandle = nil
                resetLink()
                readvertisePending = true
                // `peer` alone (a central of its own): the device advertised again after each
                // disconnection of the recording; the central has `reconnectGrace` to come back.
                if connectionsAllowed == nil { reconnectDeadline = Clock.now() + Self.reconnectGrace }
            } else { disconnected = true }
        case let .completed(n):
            inFlight = max(0, inFlight - n)
        }
    }

    // MARK: the central's PDUs

    /// A PDU from the central: the story's answer when the recording has this PDU ahead, else
    /// the rules (`PeerRules.swift`).
    private func central(_ pdu: [UInt8]) throws(TransportError) {
        guard let channelID = TwinPDU.channel(pdu) else { return }
        let channel = channelID.rawValue
        let payload = Array(pdu.dropFirst(L2CAP.basicHeaderLength))   // the basic header was read
        if channelID == .att, case let .exchangeMTURequest(client)? = TwinPDU.att(payload) {
            liveMTU = max(ATT.defaultLEMTU, min(Int(client), Int(twin.story.serverMTU ?? UInt16(ATT.defaultLEMTU))))
        }
        // A device that paired in the recording: every SMP PDU goes through the pairing
        // (`PeerPairing.swift`), which gives the recorded answers to a replayed pairing and
        // computed ones to a live central's; a recorded PDU sent again still counts as done. A
        // Secure Connections pairing is replayed as recorded from the central's Public Key on
        // when that key is the recorded one (its private key is not in the recording).
        if channel == L2CAP.ChannelID.smp.rawValue, twin.story.pairingResponse != nil {
            let k = twin.story.match(pdu, from: next, before: storyEnd)
            // A live pairing's PDU (other keys and nonces) stands for the recorded one of its code.
            if let done = k ?? twin.story.steps[min(next, storyEnd) ..< storyEnd].firstIndex(where: { TwinPDU.code($0.pdu, on: .smp) == payload.first }) {
                matched[done] = true; next = done + 1; position = done
            }
            // A replayed LE legacy pairing (the central sent the recorded Pairing Request): its
            // confirm and random values are the recorded ones, computed with the recorded TK
            // (Just Works, or the passkey typed then), so the device's recorded answers fit them
            // whatever the method; the STK is the one the recording's central encrypted with.
            if let k, case let .pairingRequest(request)? = TwinPDU.smp(payload), let recorded = twin.story.pairingResponse,
               case let .pairingResponse(response)? = TwinPDU.smp(recorded),
               !(request.authReq.contains(.secureConnections) && response.authReq.contains(.secureConnections)) {
                if !legacyReplay { notes.append("pairing: the central sent the recorded Pairing Request (LE legacy): the device's recorded answers are sent") }
                legacyReplay = true
            }
            if legacyReplay, let k {
                schedule(twin.story.steps[k].answer, reference: twin.story.steps[k].unit.timestamp)
                return
            }
            if let k, var state = secure, state.replayed || (TwinPDU.smpCode(payload) == .pairingPublicKey && state.own == nil) {
                if !state.replayed { notes.append("pairing: the central sent the recorded Pairing Public Key: the device's recorded answers are sent") }
                state.replayed = true
                secure = state
                schedule(twin.story.steps[k].answer, reference: twin.story.steps[k].unit.timestamp)
                return
            }
            try answerByRule(channel: channel, payload: payload, pdu: pdu)
            return
        }
        if let k = twin.story.match(pdu, from: next, before: storyEnd) ?? answerToDevice(channel: channel, payload: payload) {
            matched[k] = true
            next = k + 1
            position = k
            let step = twin.story.steps[k]
            var answer = step.answer
            // A discovery answer depends on the MTU: at another MTU the table answers.
            if channel == L2CAP.ChannelID.att.rawValue, liveMTU != step.mtu, let fresh = twin.table.discovery(payload[...], mtu: liveMTU),
               let op = answer.first.flatMap({ TwinPDU.attOpcode($0.pdu) }), op.kind == .response || op == .errorResponse {
                answer[0].pdu = L2CAPEncoding.basicFrame(channel: channel, fresh)
            }
            schedule(answer, reference: step.unit.timestamp)
            return
        }
        try answerByRule(channel: channel, payload: payload, pdu: pdu)
    }

    /// The central's answer to the device's own ATT request or indication (a response, an Error
    /// Response, a confirmation) with other values than recorded (its own MTU, say): it stands for
    /// the recorded answer of that opcode at the story's position, so what the device sent after
    /// it follows.
    private func answerToDevice(channel: UInt16, payload: [UInt8]) -> Int? {
        guard channel == L2CAP.ChannelID.att.rawValue, let first = payload.first else { return nil }
        let op = ATTOpcode(first)
        guard op.kind == .response || op.kind == .confirmation || op == .errorResponse, next < storyEnd else { return nil }
        return TwinPDU.attOpcode(twin.story.steps[next].pdu) == op ? next : nil
    }

    // MARK: sending

    /// Queues the device's PDUs: at once (`fast`), or at the recorded offsets from `reference`.
    func schedule(_ pdus: [(pdu: [UInt8], timestamp: Int64)], reference: Int64) {
        let now = Clock.now()
        for var p in pdus {
            // SMP Identity Address Information (Core v5.4 Vol 3 Part H 3.6.5): the twin's own
            // identity when it could not take the recorded one (a random static address).
            let smp = TwinPDU.payload(p.pdu, on: .smp)
            if let smp, case .identityAddressInformation? = TwinPDU.smp(smp, exact: true), let address, let addressType, address != twin.device,
               let own = try? SMPEncoding.command(.identityAddressInformation, [SMP.Key.addressType: .int(UInt64(addressType.rawValue & 1)),
                                                                                SMP.Key.address: .address(address)]) {
                p.pdu = L2CAPEncoding.basicFrame(channel: L2CAP.ChannelID.smp.rawValue, own)
            }
            // Distributed keys wait for encryption (3.6.1).
            if !encrypted, let smp, TwinPDU.smpCode(smp)?.distributedKey != nil {
                held.append(p); continue
            }
            let due = options.timing == .original ? now + Double(max(0, p.timestamp - reference)) / 1e6 / max(options.speed, 0.001) : now
            outbox.append((due, p.pdu))
        }
    }

    /// Sends what is due, as the controller's ACL buffers allow.
    private func flush(now: Double) throws(TransportError) {
        guard let handle = liveHandle else { return }
        while let first = outbox.first, first.due <= now {
            let packets = L2CAPEncoding.aclPackets(handle: handle, pdu: first.pdu, maxLength: aclMaxLength)
            guard inFlight + packets.count <= max(aclCredits, packets.count) || inFlight == 0 else { return }
            outbox.removeFirst()
            for p in packets { try transmit(H4Packet(.acl, p)); inFlight += 1 }
        }
    }

    /// The controller asks for the key of the link (Core v5.4 Vol 4 Part E 7.7.65.5): the one the
    /// recording's central started encryption with for this random and EDIV (the STK of a legacy
    /// pairing replayed as recorded, or a bonded LTK); none recorded: Negative Reply.
    private func longTermKeyRequest(handle: UInt16, random: [UInt8], ediv: UInt16) throws(TransportError) {
        let h = HCICommandEncoding.Value.int(UInt64(handle & 0x0FFF))
        if let stk = pairing?.stk, random.allSatisfy({ $0 == 0 }), ediv == 0 {
            notes.append("encryption: with the STK of the central's legacy pairing")
            try sendCommand(.leLongTermKeyRequestReply, [HCIKey.connectionHandle: h, HCIKey.longTermKey: .bytes(stk)])
        } else if let ltk = secure?.ltk, random.allSatisfy({ $0 == 0 }), ediv == 0 {
            // Secure Connections: EDIV and Rand are 0 (Core v5.4 Vol 3 Part H 2.4.4.1).
            notes.append("encryption: with the LTK of the central's LE Secure Connections pairing (f5)")
            try sendCommand(.leLongTermKeyRequestReply, [HCIKey.connectionHandle: h, HCIKey.longTermKey: .bytes(ltk)])
        } else if let k = twin.keys.first(where: { $0.random == random && $0.ediv == ediv }) {
            notes.append("encryption: answered with the key the recording's central used (LE Enable Encryption #\(k.frame))")
            try sendCommand(.leLongTermKeyRequestReply, [HCIKey.connectionHandle: h, HCIKey.longTermKey: .bytes(k.key)])
        } else {
            notes.append("the central asked to encrypt the link with a key the recording does not have: LE Long Term Key Request Negative Reply")
            try sendCommand(.leLongTermKeyRequestNegativeReply, [HCIKey.connectionHandle: h])
        }
    }

    func transmit(_ packet: H4Packet) throws(TransportError) {
        try transport.send(packet)
        capture?.log(packet, outgoing: true)
    }

    /// The live PDU as a unit for a divergence (the recorded connection handle, so reports read
    /// like the recording).
    func liveUnit(_ pdu: [UInt8]) -> LinkUnit {
        LinkUnit(content: .l2cap(handle: twin.handle, pdu: pdu), packets: [H4Packet(.acl, [])], frames: [liveCount],
                 timestamp: Clock.wallMicros(), fromHost: true)
    }

    /// Recorded central PDUs the live central did not send, one divergence per run of them.
    private func reportUnplayed() {
        var k = 0
        let steps = twin.story.steps
        while k < steps.count {
            guard !matched[k] else { k += 1; continue }
            var end = k
            while end + 1 < steps.count && !matched[end + 1] { end += 1 }
            let count = end - k + 1
            let range = count == 1 ? "#\(steps[k].unit.frame)" : "#\(steps[k].unit.frame)–#\(steps[end].unit.frame)"
            divergences.append(Divergence(kind: .missing, frame: steps[k].unit.frame, step: k + 1, fromHost: true,
                                          message: "\(count) recorded central PDU\(count == 1 ? "" : "s") (\(range)) not done again by the live central; first: \(steps[k].unit.title)",
                                          differences: [], expected: steps[k].unit, actual: nil))
            k = end + 1
        }
    }
}

extension PeerEngine {
    /// The connection ended and the recording has more connections to the device: the twin
    /// forgets the link's state and advertises again, as the recorded device did.
    func readvertise() throws(TransportError) {
        if connectionsAccepted > 0 { notes.append("connection \(connectionsAcceptedCount) of \(twin.connectionCount) ended: advertising again") }
        if extendedAdvertising {
            try command(.leSetExtendedAdvertisingEnable, Self.extendedAdvertisingOn)
        } else {
            try command(.leSetAdvertisingEnable, Self.legacyAdvertisingOn)
        }
    }
}
