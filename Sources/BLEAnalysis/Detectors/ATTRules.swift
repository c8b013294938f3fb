import BLEProtocol

/// Outstanding requests at the end of a link or capture, shared by `att.timeout` and `att.unanswered`.
enum OutstandingRequests {
    /// Core v5.4 Vol 3 Part F 3.3.3: a transaction not completed within 30 s times out and the bearer is dead.
    static let transactionTimeout: Int64 = 30_000_000

    /// Each request still outstanding whose response the capture could have shown: on an air capture,
    /// not one followed by packets the sniffer lost (its response may be among them).
    static func each(_ c: Connection, _ body: (ATTBearer.Pending) -> Void) {
        for p in c.att.allOutstanding where c.snifferLoss.captureLossFrame <= p.frame { body(p) }
    }
}

/// `att.timeout`: a request without a response for 30 s.
final class ATTTimeout: Detector {
    static let rule = RuleInfo(
        id: "att.timeout", severity: .error, title: "ATT transaction timed out (30 s)",
        explanation: """
        A request got no response within 30 seconds (Core v5.4 Vol 3 Part F 3.3.3). After an ATT timeout no further \
        ATT PDUs may be sent on the bearer: the connection is useless and must be closed. The peer's GATT server is \
        hung or lost the request. iOS reports it as a CBError timeout; Android as GATT_ERROR/timeout in the callback, \
        or never calls back at all — disconnect and reconnect.
        """, actor: .peripheralFirmware,
        doc: .init(
            firesWhen: #"""
                a request with no response within 30 s (Core v5.4 Vol 3 Part F 3.3.3) while the link is proven \#
                up: an end without Disconnection Complete (a handle reused, a new session inferred) or a \#
                filtered export (no connection events: the link may have gone any time after its last packet) \#
                needs traffic on the link 30 s after the request; otherwise it is not decidable and not a \#
                finding
                """#,
            evidence: "the request"))
    let kinds: [SessionEvent.Kind] = [.attResponse, .connection]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        switch event {
        case let .attResponse(c, request?, _, _, _, time, _), let .attError(c, request?, _, _, _, time, _):
            if time - request.time >= OutstandingRequests.transactionTimeout { report(c, request, after: time - request.time, &findings) }
        case let .disconnected(c, _):
            OutstandingRequests.each(c) { p in
                // An end with no Disconnection Complete (a handle reused, a new session inferred in a filtered
                // export) is not when the link went down: it is proven up only as long as it carried data.
                let end = c.lifecycle.disconnectReason == nil ? (c.traffic.lastDataTime ?? p.time) : (c.lifecycle.disconnectTime ?? p.time)
                if end - p.time >= OutstandingRequests.transactionTimeout { report(c, p, after: nil, &findings) }
            }
        default:
            break
        }
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for c in context.model.live.values.sorted(by: { $0.index < $1.index }) {
            OutstandingRequests.each(c) { p in
                guard context.captureEnd - p.time >= OutstandingRequests.transactionTimeout else { return }
                // A filtered export shows no disconnection: the link may have ended (and the request with it,
                // Core v5.4 Vol 3 Part F 3.3.3 times out a transaction only on a live bearer) any time after
                // its last packet. Only traffic on the link 30 s after the request proves it stayed up.
                if context.model.filteredExport != nil,
                   (c.traffic.lastDataTime ?? p.time) - p.time < OutstandingRequests.transactionTimeout { return }
                report(c, p, after: nil, &findings)
            }
        }
    }

    private func report(_ c: Connection, _ p: ATTBearer.Pending, after: Int64?, _ findings: inout [Finding]) {
        findings.append(Self.finding(c, p, after: after))
    }

    /// The finding of request `p` on `c`: answered only `after` its sending, or never (nil).
    static func finding(_ c: Connection, _ p: ATTBearer.Pending, after: Int64?) -> Finding {
        let tail = after.map { "answered only after \(Format.seconds($0))" } ?? "never answered"
        var f = Finding(rule: Self.rule.id, severity: .error, connection: c, time: p.time, frames: [p.frame],
                        message: "\(p.opcode.name)" + (p.handle.map { " for \(c.attributeName($0, serverIsHost: !p.sentByHost))" } ?? "") + " \(tail) (ATT timeout is 30 s)")
        f.handle = p.handle
        return f
    }
}

/// `att.unanswered`: a request still waiting when the link was lost (< 30 s after it was sent).
/// The capture proves the request died with the link only when the link was *lost* (supervision
/// timeout, LL response timeout, failed establishment, MIC failure, or an air link that vanished). A
/// link the host or the peer closed on purpose, or a capture that simply ended, leaves it undecided
/// (information: the host may have given up by its own timer, the device may reboot after a
/// control-point write).
final class ATTUnanswered: Detector {
    static let rule = RuleInfo(
        id: "att.unanswered", severity: .warning, title: "ATT request never answered",
        explanation: """
        A request had no response when the link was lost, less than 30 s after it was sent. The app's GATT operation \
        never completed (Android calls back with GATT_ERROR or status 133 on disconnect; iOS fails the pending \
        operation): retry after reconnecting. Information when the link was closed on purpose; a request cut by the \
        end of the capture is not decidable and not reported.
        """, actor: .app,
        doc: .init(
            severity: "warning (folded into the loss's `link.disconnect`) / info",
            firesWhen: #"""
                a request with no response when the link ended < 30 s after it. When the link was **lost** \#
                (0x08, 0x22, 0x3E, 0x3D, or an air link that vanished) it is the loss's consequence: cause \#
                `link-loss`, folded into that `link.disconnect` (whose cause names the request when it \#
                explains the loss); when the host or the peer closed the link on purpose it is info. A request \#
                still waiting when the capture ended (< 30 s later) is not decidable and not reported. Air \#
                captures: not when the sniffer lost packets after the request
                """#,
            evidence: "the request"))
    let kinds: [SessionEvent.Kind] = [.connection]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .disconnected(c, _) = event else { return }
        let lost = c.lifecycle.disconnectReason.map { Disconnects.warnings.contains($0.rawValue) } ?? false
        let by = c.lifecycle.localDisconnectReason != nil ? "before the host closed the connection" : "before the peer closed the connection"
        OutstandingRequests.each(c) { p in
            let end = c.lifecycle.disconnectTime ?? p.time
            guard end - p.time < OutstandingRequests.transactionTimeout else { return }
            if lost {
                report(c, p, "before the link was lost", .warning, &findings)
            } else {
                report(c, p, by, .info, &findings)
            }
        }
    }

    /// A request still waiting when the capture ended, less than 30 s after it, is not decidable: not
    /// a finding (`att.timeout` decides the ones older than 30 s).
    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {}

    private func report(_ c: Connection, _ p: ATTBearer.Pending, _ when: String, _ severity: Severity, _ findings: inout [Finding]) {
        let what = p.handle.map { " for " + c.attributeName($0, serverIsHost: !p.sentByHost) } ?? ""
        let server: Actor = p.sentByHost ? .peripheralFirmware : .app
        var f = Finding(rule: Self.rule.id, severity: severity, connection: c, time: p.time, frames: [p.frame],
                        message: "\(p.opcode.name)\(what) to \(p.sentByHost ? .peer(c) : "the host" as FindingMessage) got no response \(when)",
                        actor: severity == .info ? Actor.none : server)
        f.handle = p.handle
        findings.append(f)
    }
}

/// `att.protocol-violation`: the sequential ATT protocol broken.
final class ATTProtocolViolation: Detector {
    static let rule = RuleInfo(
        id: "att.protocol-violation", severity: .warning, title: "ATT protocol violation",
        explanation: """
        ATT is sequential (Core v5.4 Vol 3 Part F 3.3.2): a client sends one request and waits for its response; a server \
        sends one indication and waits for its confirmation. Here a second request was sent while one was outstanding, \
        a response came with no request, or an indication was sent before the previous one was confirmed. Peers may drop \
        the PDU or disconnect. On Android, never issue a GATT operation before the previous callback; on iOS, this points \
        at the peripheral firmware or another host on the device.
        """, actor: .peripheralFirmware,
        doc: .init(
            firesWhen: #"""
                a second request on a bearer while one is outstanding (requests are then answered in order: \#
                the first response pairs with the oldest request; an Error Response pairs with the oldest \#
                request of the opcode it names, Request Opcode In Error, Core v5.4 Vol 3 Part F 3.4.1.1) — one \#
                finding per client and connection from the first such request, the later ones folded in; a \#
                response with no outstanding request — only when the capture holds everything its request \#
                could be in: not on a link whose set-up is not in the capture before that client's first \#
                request (it predates the capture; an ACL-only export has no set-up at all), info when a frame \#
                of the client since its last request could not be decoded or the sniffer lost packets; an \#
                indication sent while one is unconfirmed
                """#,
            evidence: "the violating PDU, the outstanding request (or the undecodable frame)"))
    let kinds: [SessionEvent.Kind] = [.attRequest, .attResponse, .attIndication]
    private struct ClientKey: Hashable { var connection: Int; var host: Bool }
    /// Where each client's first overlapping request was reported (`findings` only grows during the pass).
    private var firstOverlap: [ClientKey: Int] = [:]
    func findingsMoved(_ moves: FindingMoves) { firstOverlap = firstOverlap.mapValues(moves.callAsFunction) }

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        switch event {
        case let .attRequest(c, p, sent, overlapping?):
            // One finding per client on the bearer, from its first overlap; the later ones fold into it.
            let key = ClientKey(connection: c.index, host: sent)
            if let i = firstOverlap[key], i < findings.count, findings[i].rule == Self.rule.id {
                findings[i].fold(rule: Self.rule.id, frame: p.frame)
                return
            }
            firstOverlap[key] = findings.count
            findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: c, time: p.time, frames: [p.frame, overlapping.frame],
                                    message: "\(p.opcode.name) sent by \(sent ? "the host" : FindingMessage.peer(c)) while its \(overlapping.opcode.name) (frame \(overlapping.frame)) was still outstanding",
                                    actor: sent ? .app : .peripheralFirmware))
        case let .attResponse(c, nil, opcode, _, frame, time, sent):
            orphan(c, "\(opcode.name)", frame: frame, time: time, sent: sent, &findings)
        case let .attError(c, nil, error, _, frame, time, sent):
            orphan(c, "Error Response (\(error))", frame: frame, time: time, sent: sent, &findings)
        case let .attValue(c, _, _, true, frame, time, _, unconfirmed?, _):
            findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: c, time: time, frames: [frame, unconfirmed.frame],
                                    message: "Indication sent before the indication of frame \(unconfirmed.frame) was confirmed"))
        default:
            break
        }
    }

    /// A response with no outstanding request: a violation only when the capture holds everything its
    /// request could be in. Not when the link began before the capture and the client's requests are
    /// not in it yet (the request predates the capture; an ACL-only export has no set-up at all: the
    /// summary says so once); information when a frame of the client since its last request could not
    /// be decoded, or the sniffer lost packets (the request may be there).
    private func orphan(_ c: Connection, _ what: String, frame: Int, time: Int64, sent: Bool, _ findings: inout [Finding]) {
        let client: ATTBearer.Side = sent ? .peer : .host
        let last = c.att.lastRequestFrame(from: client)
        if c.lifecycle.inferred, last == 0 { return }
        let undecoded = c.att.undecodedFrame(from: client)
        if undecoded > last || c.snifferLoss.captureLossFrame > last {
            let why = undecoded > last ? "frame \(undecoded), which could not be decoded" : "packets the sniffer lost (frame \(c.snifferLoss.captureLossFrame))"
            findings.append(Finding(rule: Self.rule.id, severity: .info, connection: c, time: time, frames: [frame] + (undecoded > last ? [undecoded] : []),
                                    message: "\(what) with no request in the capture: the request may be in \(why)", actor: Actor.none))
            return
        }
        findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: c, time: time, frames: [frame],
                                message: "\(what) with no outstanding request"))
    }
}

/// `att.indication-unconfirmed`: an indication the client never confirmed although it could have.
/// Proof needs one of: 30 s without a confirmation on a link that stayed up (the server's ATT
/// transaction timeout, Core v5.4 Vol 3 Part F 3.3.3), or the client sending other ATT PDUs after the
/// indication without ever confirming it. An indication sent shortly before the link went down (the
/// host tearing it down, a supervision timeout) proves nothing; a second indication while one is
/// unconfirmed is `att.protocol-violation`.
final class IndicationUnconfirmed: Detector {
    static let rule = RuleInfo(
        id: "att.indication-unconfirmed", severity: .warning, title: "Indication never confirmed",
        explanation: """
        An indication got no Handle Value Confirmation although the client stayed reachable (it kept sending other ATT \
        PDUs, or 30 s passed with the link up). The server cannot send another indication until it is confirmed and \
        times out after 30 s. The client's stack confirms automatically on iOS and Android: a missing confirmation \
        points at a stuck host stack or a custom client.
        """, actor: .hostStack,
        doc: .init(
            severity: "warning (info when the client never subscribed)",
            firesWhen: #"""
                an indication never confirmed although the client could have: 30 s passed with the link up \#
                (set-up in the capture), or the client sent other ATT requests/commands after it. An \#
                indication shortly before a teardown proves nothing; the host's own indication to a peer that \#
                never subscribed (Service Changed) is info
                """#,
            evidence: "the indication, the client's later PDU"))
    let kinds: [SessionEvent.Kind] = [.attIndication, .connection]
    /// An open indication, with the client's ATT PDU count when it was sent (the model counts them, so
    /// this rule needs no event per PDU to know whether the client spoke since).
    private struct Open { var c: Connection; var p: ATTBearer.Pending; var sentByHost: Bool; var clientPDUs: Int }
    @exclusivity(unchecked) private var open: [Open] = []
    func keeps(_ c: Connection, _ context: DetectorContext) -> Bool { open.contains { $0.c === c } }

    private static func clientPDUs(_ c: Connection, indicationSentByHost: Bool) -> Int {
        indicationSentByHost ? c.att.pdusReceived : c.att.pdusSent
    }

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        switch event {
        case let .attValue(c, handle, _, true, frame, time, sent, unconfirmed, _):
            // A new indication while one is open is a protocol violation (its own rule): forget the old one.
            if unconfirmed != nil { open.removeAll { $0.c === c && $0.sentByHost == sent } }
            open.append(Open(c: c, p: .init(opcode: .handleValueIndication, handle: handle, frame: frame, time: time), sentByHost: sent,
                             clientPDUs: Self.clientPDUs(c, indicationSentByHost: sent)))
        case let .attConfirmation(c, indication?, _, _):
            open.removeAll { $0.c === c && $0.p.frame == indication.frame }
        case let .disconnected(c, _):
            for o in open where o.c === c { decide(o, end: c.lifecycle.disconnectTime ?? o.p.time, &findings) }
            open.removeAll { $0.c === c }
        default:
            break
        }
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for o in open { decide(o, end: context.captureEnd, &findings) }
    }

    private func decide(_ o: Open, end: Int64, _ findings: inout [Finding]) {
        // The client sent ATT PDUs after the indication (its last one, as evidence).
        let spoke = Self.clientPDUs(o.c, indicationSentByHost: o.sentByHost) > o.clientPDUs
        let lastFromClient = o.sentByHost ? o.c.traffic.lastReceivedFrame : o.c.traffic.lastSentFrame
        let clientSpoke: Int? = spoke ? lastFromClient.flatMap { $0 > o.p.frame ? $0 : nil } : nil
        let o = (c: o.c, p: o.p, sentByHost: o.sentByHost, clientSpoke: clientSpoke)
        let waited = end - o.p.time
        // 30 s "with the link up" needs the link's life in the capture (not an ATT-only export).
        guard (waited >= OutstandingRequests.transactionTimeout && !o.c.lifecycle.inferred) || o.clientSpoke != nil else { return }
        // The host's own server indicating a client that never subscribed (Android's Service Changed):
        // a client may ignore what it did not ask for; information.
        let subscribed = o.c.subscriptions.values.contains { s in
            s.serverIsHost == o.sentByHost && s.value & 2 != 0
                && (o.c.gatt(serverIsHost: o.sentByHost)?.owningCharacteristic(of: s.cccdHandle)?.valueHandle ?? s.cccdHandle &- 1) == o.p.handle
        }
        let client: FindingMessage = o.sentByHost ? .peer(o.c) : "the host"
        let what = o.c.attributeName(o.p.handle ?? 0, serverIsHost: o.sentByHost)
        let why = o.clientSpoke.map { "although \(client) sent other ATT PDUs after it (frame \($0))" } ?? "for \(Format.duration(waited)) with the link up"
        let unasked = o.sentByHost && !subscribed
        findings.append(Finding(rule: Self.rule.id, severity: unasked ? .info : .warning, connection: o.c, time: o.p.time,
                                frames: [o.p.frame] + (o.clientSpoke.map { [$0] } ?? []),
                                message: "Indication of \(what) was never confirmed by \(client), \(why)"
                                    + (!unasked ? "" : o.c.encryptedWithStoredKey
                                        // Bonded (encrypted with a stored key): the server keeps a CCCD written on an
                                        // earlier connection (Vol 3 Part G 3.3.3.3), which the capture cannot show.
                                        ? " (not subscribed on this connection; the link was encrypted with a stored key, so it may have subscribed on an earlier one)"
                                        : " (it never subscribed to it on this connection)"),
                                actor: unasked ? Actor.none : o.sentByHost ? .peripheralFirmware : .hostStack))
    }
}

/// `att.error`: Error Responses other than the "Attribute Not Found" that ends every discovery.
final class ATTErrors: Detector {
    static let rule = RuleInfo(
        id: "att.error", severity: .info, title: "ATT error responses",
        explanation: """
        The server answered requests with errors (one finding per connection and error code). Discovery always ends with \
        Attribute Not Found, which is not reported. Read/Write Not Permitted and Invalid Handle usually mean the app \
        uses a stale handle cache (Android: refresh the cache after a firmware update; iOS: the peripheral must \
        implement Service Changed).
        """, actor: .none,
        doc: .init(
            firesWhen: #"""
                Error Responses other than the expected discovery "Attribute Not Found" (one finding per \#
                (connection, error code)); the request is the outstanding one of the opcode the response names \#
                (Request Opcode In Error)
                """#,
            evidence: "the first Error Response, its request"))
    let kinds: [SessionEvent.Kind] = [.attResponse]
    private var seen = Set<String>()

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .attError(c, request, error, handle, frame, time, sent) = event else { return }
        if error == .attributeNotFound, let op = request?.opcode,
           [.readByGroupTypeRequest, .readByTypeRequest, .findInformationRequest, .findByTypeValueRequest].contains(op) { return }
        guard seen.insert("\(c.index)/\(error.rawValue)").inserted else { return }
        var f = Finding(rule: Self.rule.id, severity: .info, connection: c, time: time, frames: [frame] + (request.map { [$0.frame] } ?? []),
                        message: "\(request?.opcode.name ?? "Request") failed: \(error)" + (handle != 0 ? " on \(c.attributeName(handle, serverIsHost: sent))" : ""))
        f.status = error.rawValue
        if handle != 0 { f.handle = handle }
        findings.append(f)
    }
}

/// `att.stale-cache`: the server said its database changed (a Service Changed indication naming a handle
/// range, Core v5.4 Vol 3 Part G 7.1, or a Database Out Of Sync error, 0x12, 2.5.2.1) and the client went on
/// reading or writing handles in that range without discovering it again (no Read By Group Type, Read By
/// Type, Find Information or Find By Type Value from a handle at or below the range's end): it uses handles
/// from its cache, which may now name other attributes (2.5.2: the client shall rediscover the affected
/// range). Information: the frames show the use, not that the handles moved; warning when such a request was
/// answered Invalid Handle (0x01) or Database Out Of Sync (0x12): the server refused the stale handle. Who
/// acts: the client (the app when the host is the client). One finding per connection.
final class StaleCache: Detector {
    static let rule = RuleInfo(
        id: "att.stale-cache", severity: .warning, title: "Handles used from a stale cache after Service Changed",
        explanation: """
        The GATT server said its attributes changed (Service Changed, or Database Out Of Sync) and the client went on \
        using handles in the changed range without discovering them again: they may now belong to other \
        characteristics. Discover services again after Service Changed (Android: BluetoothGatt.discoverServices(); \
        iOS does it when the peripheral indicates Service Changed, which the peripheral must then support).
        """, actor: .app,
        doc: .init(
            severity: "warning / info",
            firesWhen: #"""
                the server said its database changed — a Service Changed indication (Vol 3 Part G 7.1; the \#
                characteristic known from discovery, the value a 4-byte handle range) or a Database Out Of \#
                Sync error (0x12, 2.5.2.1: the whole database) — and the client then read or wrote a handle in \#
                that range (any request with a handle, a Write Command) before any discovery request (Read By \#
                Group Type, Read By Type, Find Information, Find By Type Value) starting at or below the \#
                range's end: it used handles from its cache (2.5.2: the client shall rediscover the affected \#
                range). Info: the frames show the use, not that the handles moved; warning when such a request \#
                was answered Invalid Handle (0x01) or Database Out Of Sync (0x12). Who acts: the client — the \#
                app when the host is the client, the peer's firmware when the host's server changed. One \#
                finding per connection with the count
                """#,
            evidence: "the first stale use, the Service Changed indication (or 0x12 error), the refusal"))
    let kinds: [SessionEvent.Kind] = [.attRequest, .attWrite, .attResponse, .gattChange]
    /// Until a server says its database changed no request can be stale: the requests, writes and
    /// responses are asked for from the first change on (they were ~26 instructions each for nothing).
    let onDemand: [SessionEvent.Kind] = [.attRequest, .attWrite, .attResponse]
    private var asking = false
    private struct Use { var c: Connection; var change: ServiceChange; var first: Int; var time: Int64; var handle: UInt16; var count: Int; var refused: Int? }
    private var rediscovered: [Int: Int] = [:]        // connection → the change frame it rediscovered after
    private var uses: [Int: Use] = [:]                // connection → its stale use (of its first change used so)
    private var order: [Int] = []
    func retire(_ c: Connection, _ context: DetectorContext, _ findings: inout [Finding]) {
        rediscovered[c.index] = nil
        guard uses[c.index] != nil else { return }
        report(c.index, &findings)
        uses[c.index] = nil
        order.removeAll { $0 == c.index }
    }

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        switch event {
        case .databaseChanged:
            guard !asking else { return }
            asking = true
            for k in onDemand { context.demand(k, true) }
        case let .attRequest(c, p, sent, _):
            guard let change = c.att.serviceChanged, sent == change.clientIsHost, rediscovered[c.index] != change.frame else { return }
            if [.readByGroupTypeRequest, .readByTypeRequest, .findInformationRequest, .findByTypeValueRequest].contains(p.opcode) {
                if (p.handle ?? 1) <= change.range.upperBound { rediscovered[c.index] = change.frame }
                return
            }
            guard p.opcode != .writeRequest, let h = p.handle else { return }   // writes are counted by `.attWrite`
            use(c, change, handle: h, frame: p.frame, time: p.time)
        case let .attWrite(c, handle, _, _, frame, time, sent):
            guard let change = c.att.serviceChanged, sent == change.clientIsHost, rediscovered[c.index] != change.frame else { return }
            use(c, change, handle: handle, frame: frame, time: time)
        case let .attError(c, request, error, _, frame, _, _):
            guard error == .invalidHandle || error == .databaseOutOfSync, let request, var u = uses[c.index], u.refused == nil,
                  request.frame >= u.first, request.frame > u.change.frame else { return }
            u.refused = frame
            uses[c.index] = u
        default:
            break
        }
    }

    private func use(_ c: Connection, _ change: ServiceChange, handle: UInt16, frame: Int, time: Int64) {
        guard change.range.contains(handle), frame > change.frame else { return }
        if var u = uses[c.index] {
            if u.change.frame == change.frame { u.count += 1; uses[c.index] = u }
            return
        }
        guard uses.count < 500 else { return }
        uses[c.index] = Use(c: c, change: change, first: frame, time: time, handle: handle, count: 1, refused: nil)
        order.append(c.index)
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for i in order { report(i, &findings) }
    }

    /// A connection's stale use told: at the end, or when the connection is summarised.
    private func report(_ i: Int, _ findings: inout [Finding]) {
        guard let u = uses[i] else { return }
        let r = u.change.range
        let told = u.change.outOfSync
            ? "the server answered Database Out Of Sync (frame \(u.change.frame))"
            : "the server indicated Service Changed for handles 0x\(Format.hex(r.lowerBound, 4))–0x\(Format.hex(r.upperBound, 4)) (frame \(u.change.frame))"
        let more = u.count > 1 ? " (\(u.count) requests)" : ""
        let refused = u.refused.map { "; the server refused it (frame \($0))" } ?? ""
        var f = Finding(rule: Self.rule.id, severity: u.refused != nil ? .warning : .info, connection: u.c, time: u.time,
                        frames: [u.first, u.change.frame] + (u.refused.map { [$0] } ?? []),
                        message: "After \(told), the client used handle 0x\(Format.hex(u.handle, 4)) at frame \(u.first)\(more) without discovering the range again: handles from a stale cache\(refused)")
        f.handle = u.handle
        f.actor = u.change.clientIsHost ? .app : .peripheralFirmware
        findings.append(f)
    }
}

/// `att.slow-response`: responses that took long for the link — over a second, or many connection
/// events for the connection's own interval and latency — below the 30 s transaction timeout
/// (`att.timeout`). One finding per connection, keyed on the first slow response, with the count and
/// the slowest. Information: the transaction completed; a warning when one neared the 30 s limit.
final class SlowResponse: Detector {
    static let rule = RuleInfo(
        id: "att.slow-response", severity: .info, title: "Slow ATT responses",
        explanation: """
        A response came long after its request: over a second, or after many connection events. The client could send \
        nothing else meanwhile (ATT is sequential), so every GATT operation behind it waited. A slow peer is its firmware \
        doing work before answering (flash writes, a sensor read) — answer at once and notify the result later; a slow \
        phone is its app's GATT server callback (Android: sendResponse late; iOS: respond(to:withResult:) late).
        """, thresholds: [.init(name: "slow", defaultValue: 1.0, unit: "s", meaning: "a response slower than this is reported"),
                          .init(name: "events", defaultValue: 20, unit: "connection events", meaning: "…or slower than this many connection events (and ≥ 250 ms)")],
        actor: .peripheralFirmware,
        doc: .init(
            severity: "info (warning ≥ 20 s)",
            firesWhen: #"""
                responses slower than `slow` (default 1 s) and than 4 of the connection's events (interval × \#
                (1 + latency): a peer with latency wakes only then), or slower than `events` (default 20) \#
                connection events of the connection's own interval × (1 + latency) and ≥ 250 ms, below the 30 \#
                s timeout: one finding per connection with the count and the slowest
                """#,
            evidence: "the first slow response, its request, the slowest"))
    let kinds: [SessionEvent.Kind] = [.attResponse]
    private struct Slow { var c: Connection; var count: Int; var worst: Int64; var worstFrame: Int; var byHost: Bool; var finding: Int }
    private var slow: [Int: Slow] = [:]
    /// Its finding is completed at the end (the count, the slowest), or when the connection is
    /// summarised: nothing later changes it.
    func retire(_ c: Connection, _ context: DetectorContext, _ findings: inout [Finding]) {
        if let s = slow.removeValue(forKey: c.index) { complete(s, &findings) }
    }
    func findingsMoved(_ moves: FindingMoves) { slow = slow.mapValues { s in var s = s; s.finding = moves(s.finding); return s } }

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        let c: Connection, request: ATTBearer.Pending, frame: Int, time: Int64
        switch event {
        case let .attResponse(cc, r?, _, _, f, t, _): (c, request, frame, time) = (cc, r, f, t)
        case let .attError(cc, r?, _, _, f, t, _): (c, request, frame, time) = (cc, r, f, t)
        default: return
        }
        let took = time - request.time
        guard took < ATT.transactionTimeout, took >= 250_000 else { return }
        // A peer with peripheral latency hears a request only when it wakes, up to (1 + latency)
        // intervals later, and answers at a later event: a few such events are the link's own pace,
        // not a slow answer, however long they are.
        let eventMicros = Int64(Double(c.link.intervalUnits) * 1250 * Double(1 + Int(c.link.latency)))
        let manyEvents = eventMicros > 0 && took >= Int64(threshold("events", context)) * eventMicros
        let linkPace = eventMicros > 0 && took <= 4 * eventMicros
        guard (took >= micros("slow", context) && !linkPace) || manyEvents else { return }
        if var s = slow[c.index] {
            s.count += 1
            if took > s.worst { (s.worst, s.worstFrame) = (took, frame) }
            slow[c.index] = s
        } else {
            guard slow.count < 10_000 else { return }
            // Made now, so the report decodes the frames around it as they go by; told in full at the end.
            findings.append(Finding(rule: Self.rule.id, severity: .info, connection: c, time: time, frames: [frame, request.frame],
                                    message: "a response took \(SessionModel.span(took))", actor: request.sentByHost ? .peripheralFirmware : .app))
            slow[c.index] = Slow(c: c, count: 1, worst: took, worstFrame: frame, byHost: request.sentByHost, finding: findings.count - 1)
        }
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for s in slow.values { complete(s, &findings) }
    }

    private func complete(_ s: Slow, _ findings: inout [Finding]) {
        let server: FindingMessage = s.byHost ? .peer(s.c) : "the host"
        let effective = Double(s.c.link.intervalUnits) * 1250 * Double(1 + Int(s.c.link.latency))
        let events = s.c.link.intervalUnits > 0
            ? " (\(Int(Double(s.worst) / effective)) connection events of \(SessionModel.format(s.c.intervalMillis)) ms\(s.c.link.latency > 0 ? ", latency \(s.c.link.latency)" : ""))" : ""
        let many: FindingMessage = s.count > 1 ? "\(s.count) responses from \(server) were slow; the slowest took \(SessionModel.span(s.worst)) (frame \(s.worstFrame))"
            : "a response from \(server) took \(SessionModel.span(s.worst)) (frame \(s.worstFrame))"
        let near = s.worst >= 20_000_000
        findings[s.finding].message = many + FindingMessage(events + (near ? ", close to the 30 s ATT transaction timeout" : ""))
        findings[s.finding].severity = near ? .warning : .info
        if s.worstFrame != findings[s.finding].frames.first { findings[s.finding].frames.append(s.worstFrame) }
    }
}
