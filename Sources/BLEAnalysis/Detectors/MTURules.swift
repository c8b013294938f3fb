import BLEProtocol

/// `mtu.truncated-read`: a Read Response that filled the MTU and was never continued with Read Blob.
/// A client may continue a long read after other requests (BlueZ reads a HID Report Map in ATT_MTU−1
/// steps with requests in between), so the read stays open until the link or the capture ends: any
/// later Read Blob of that handle on the connection continues it. Proof of a cut value: the client
/// made other requests afterwards and never read the rest; when nothing followed, information.
final class TruncatedRead: Detector {
    static let rule = RuleInfo(
        id: "mtu.truncated-read", severity: .warning, title: "Value cut at ATT_MTU−1 (no Read Blob)",
        explanation: """
        A Read Response carried exactly ATT_MTU−1 bytes — the most it can hold — and no Read Blob Request followed for \
        that handle, so the rest of the value was never read: the classic "my characteristic is cut at 22 bytes". \
        iOS and Android read long values for you through readValue/readCharacteristic; this happens with custom \
        stacks, with a firmware that answers Read Blob with an error, or when the value is read by a raw ATT request. \
        Exchange a larger MTU first, or continue with Read Blob (Core v5.4 Vol 3 Part G 4.8.3).
        """,
        doc: .init(
            severity: "warning (info when undecidable)",
            firesWhen: #"""
                on a connection whose ATT_MTU is known, a Read Response of exactly ATT_MTU−1 bytes never \#
                continued by a Read Blob of that handle before the link or the capture ended, although the \#
                client made other requests after it (a Read Blob after requests in between continues it); when \#
                nothing followed the read, info
                """#,
            evidence: "the Read Response, the Read Request"))
    let kinds: [SessionEvent.Kind] = [.attResponse, .attRequest, .connection]
    private struct Pending {
        var handle: UInt16; var responseFrame: Int; var requestFrame: Int; var time: Int64; var length: Int; var hostServes: Bool
        /// The client sent another request after the response (not a Read Blob of this handle).
        var movedOn = false
    }
    /// Full reads not yet continued, per connection (one per handle, bounded).
    @exclusivity(unchecked) private var pending = ConnectionState<[Pending]>()
    @exclusivity(unchecked) private var open: [Connection] = []
    func keeps(_ c: Connection, _ context: DetectorContext) -> Bool { open.contains { $0 === c } }
    static let maxOpenPerConnection = 32

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        switch event {
        case let .attResponse(c, request, opcode, length, frame, time, _):
            // Mid-connection captures: the MTU is only bounded below, so "full" is not decidable.
            guard opcode == .readResponse, let r = request, r.opcode == .readRequest, let h = r.handle,
                  c.att.mtuKnown, length == c.att.mtu - 1 else { return }
            let p = Pending(handle: h, responseFrame: frame, requestFrame: r.frame, time: time, length: length, hostServes: !r.sentByHost)
            if pending[c] == nil { open.append(c) }
            pending.update(c, initial: []) { list in
                list.removeAll { $0.handle == h }   // read again from the start: the newer read is the one to continue
                if list.count < Self.maxOpenPerConnection { list.append(p) }
            }
        case let .attRequest(c, p, _, _):
            guard !open.isEmpty else { return }
            pending.updateIfPresent(c) { list in
                if p.opcode == .readBlobRequest, let h = p.handle, list.contains(where: { $0.handle == h }) {
                    list.removeAll { $0.handle == h }   // continued, even after other requests
                }
                for i in list.indices where !list[i].movedOn { list[i].movedOn = true }
            }
        case let .disconnected(c, _):
            flush(c, undecided: "the link closed", &findings)
        default:
            break
        }
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for c in open.sorted(by: { $0.index < $1.index }) { flush(c, undecided: "the capture ended", &findings) }
    }

    /// At the end of the link or capture: a read the client moved on from is cut (warning); one the
    /// link or capture ended right after is not decidable (information).
    private func flush(_ c: Connection, undecided: String, _ findings: inout [Finding]) {
        guard !open.isEmpty, let list = pending[c] else { return }
        pending[c] = nil
        open.removeAll { $0 === c }
        for p in list {
            let name = c.attributeName(p.handle, serverIsHost: p.hostServes)
            let client: FindingMessage = p.hostServes ? .peer(c) : "the host"
            if !p.movedOn {
                findings.append(Finding(rule: Self.rule.id, severity: .info, connection: c, time: p.time, frames: [p.responseFrame, p.requestFrame],
                                        message: "Read of \(name) by \(client) returned \(p.length) bytes (ATT_MTU \(c.att.mtu) − 1), then \(undecided) before any Read Blob: the value may be longer", actor: Actor.none))
                continue
            }
            findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: c, time: p.time, frames: [p.responseFrame, p.requestFrame],
                                    message: "Read of \(name) by \(client) returned \(p.length) bytes (ATT_MTU \(c.att.mtu) − 1) and \(client) moved on without ever reading the rest with Read Blob: the value is probably cut",
                                    actor: p.hostServes ? .peripheralFirmware : .app))
        }
    }
}

/// `mtu.truncated-notification`: notifications that fill ATT_MTU−3 *and* show signs of being cut.
/// A value of exactly ATT_MTU−3 bytes is normal when the application segments its data (fixed
/// 20-byte frames, a message in chunks with a shorter last one), so the size alone proves nothing.
/// Evidence that counts: on this connection every value of the characteristic filled ATT_MTU−3
/// exactly (no shorter chunk, so nothing is segmented) *and* the same characteristic of the same peer
/// carried longer values elsewhere in the capture (another connection with a larger MTU). Every value
/// full with no longer one seen is information ("may"). A connection whose MTU is unknown (it began
/// before the capture) is not decided.
final class TruncatedNotification: Detector {
    static let rule = RuleInfo(
        id: "mtu.truncated-notification", severity: .warning, title: "Notifications cut at ATT_MTU−3",
        explanation: """
        Every notification or indication of a characteristic carried exactly ATT_MTU−3 bytes on this connection, \
        while the same characteristic sent longer values when the MTU allowed: the server cuts values to ATT_MTU−3 \
        silently (Core v5.4 Vol 3 Part F 3.4.7.1). Request a larger MTU right after connecting (Android: \
        requestMtu(247..517); iOS negotiates it itself, check maximumUpdateValueLength on the peripheral side), or \
        have the firmware split values itself.
        """, actor: .app,
        doc: .init(
            severity: "warning / info",
            firesWhen: #"""
                ATT_MTU known, and on this connection **every** notification/indication of a characteristic is \#
                exactly ATT_MTU−3 bytes (a shorter value means the data is segmented, not cut): warning when \#
                the same peer sent longer values of that characteristic on another connection (evidence of \#
                cutting), info otherwise (fixed-size frames are normal)
                """#,
            evidence: "the first such value, (warning) the longer value"))
    let kinds: [SessionEvent.Kind] = [.attValueFull, .attIndication]
    private struct Candidate { var c: Connection; var handle: UInt16; var length: Int; var frame: Int; var time: Int64; var indication: Bool; var sent: Bool }
    @exclusivity(unchecked) private var candidates: [Candidate] = []
    @exclusivity(unchecked) private var seen = Set<String>()
    /// The longest value of each characteristic (peer, value handle, sender) on summarised connections,
    /// the first connection's of each length (bounded: past `maxSummarised` keys a longer value on a
    /// summarised connection is not looked for).
    private struct StreamKey: Hashable { var peer: BDAddr; var handle: UInt16; var sentByHost: Bool }
    private var summarised: [StreamKey: (length: Int, frame: Int, connection: Int)] = [:]
    private static let maxSummarised = 10_000

    func keeps(_ c: Connection, _ context: DetectorContext) -> Bool { candidates.contains { $0.c === c } }
    func retire(_ c: Connection, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard let peer = c.peerAddress else { return }
        for (handle, s) in zip(c.valueStreams.keys, c.valueStreams.values) {
            let key = StreamKey(peer: peer, handle: handle, sentByHost: s.sentByHost)
            if let old = summarised[key] {
                if s.maxLength > old.length || (s.maxLength == old.length && c.index < old.connection) { summarised[key] = (s.maxLength, s.lastFrame, c.index) }
            } else if summarised.count < Self.maxSummarised {
                summarised[key] = (s.maxLength, s.lastFrame, c.index)
            }
        }
    }

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .attValue(c, handle, length, indication, frame, time, sent, _, _) = event,
              c.att.mtuKnown, length == c.att.mtu - 3, seen.insert("\(c.index)/\(handle)").inserted else { return }
        candidates.append(Candidate(c: c, handle: handle, length: length, frame: frame, time: time, indication: indication, sent: sent))
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for k in candidates {
            guard let stream = k.c.valueStreams[k.handle], stream.shorterValues == 0, stream.maxLength == k.length else { continue }
            // The same characteristic (same server, same value handle) with a longer value elsewhere.
            var longer: (length: Int, frame: Int, connection: Int)? = nil
            if let peer = k.c.peerAddress {
                if let s = summarised[StreamKey(peer: peer, handle: k.handle, sentByHost: stream.sentByHost)], s.length > k.length { longer = s }
                for other in context.model.connections where other !== k.c && other.peerAddress == peer {
                    if let s = other.valueStreams[k.handle], s.sentByHost == stream.sentByHost, s.maxLength > k.length,
                       longer.map({ s.maxLength > $0.length }) ?? true {
                        longer = (s.maxLength, s.lastFrame, other.index)
                    }
                }
            }
            let what = k.c.attributeName(k.handle, serverIsHost: k.sent)
            let kind = k.indication ? "indication" : "notification"
            let count = stream.notifications + stream.indications
            let server: Actor = k.sent ? .app : .peripheralFirmware
            if let longer {
                findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: k.c, time: k.time, frames: [k.frame, longer.frame],
                                        message: "All \(count) \(kind)s of \(what) from \(k.sent ? "the host" : FindingMessage.peer(k.c)) were exactly ATT_MTU \(k.c.att.mtu) − 3 = \(k.length) bytes, while connection \(longer.connection) carried \(longer.length)-byte values of it: they are cut",
                                        actor: .app))
            } else {
                findings.append(Finding(rule: Self.rule.id, severity: .info, connection: k.c, time: k.time, frames: [k.frame],
                                        message: "All \(count) \(kind)s of \(what) were exactly ATT_MTU \(k.c.att.mtu) − 3 = \(k.length) bytes: fixed-size frames, or values the server may cut (no longer value of it in the capture to tell)",
                                        actor: server))
            }
        }
    }
}

/// `mtu.write-too-long`: a write whose value cannot fit the MTU.
final class WriteTooLong: Detector {
    static let rule = RuleInfo(
        id: "mtu.write-too-long", severity: .warning, title: "Write longer than ATT_MTU−3",
        explanation: """
        A Write Request or Write Command carried more than ATT_MTU−3 bytes of value. Servers reject or truncate it. Use a \
        long write (Prepare/Execute — Android WRITE_TYPE_DEFAULT does this, iOS .withResponse does too) or split the \
        data; for writes without response keep each chunk within maximumWriteValueLength(for: .withoutResponse) (iOS) \
        or MTU−3 (Android).
        """,
        doc: .init(
            firesWhen: #"""
                a Write Request/Command whose value exceeds ATT_MTU−3, on a connection whose ATT_MTU is known \#
                (a mid-connection capture only bounds it below by the largest PDU seen)
                """#,
            evidence: "the write"))
    let kinds: [SessionEvent.Kind] = [.attWrite]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .attWrite(c, handle, length, command, frame, time, sent) = event, c.att.mtuKnown, length > c.att.mtu - 3 else { return }
        findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: c, time: time, frames: [frame],
                                message: "\(command ? "Write Command" : "Write Request") of \(length) bytes to \(c.attributeName(handle, serverIsHost: !sent)) exceeds ATT_MTU \(c.att.mtu) − 3"))
    }
}

/// `mtu.late-exchange`: the MTU was exchanged after data already flowed.
final class LateMTUExchange: Detector {
    static let rule = RuleInfo(
        id: "mtu.late-exchange", severity: .info, title: "MTU exchanged after data",
        explanation: """
        The MTU exchange happened after ATT data (other than discovery) was already sent on the bearer, so those first \
        values were limited to 20 bytes. Exchange the MTU first thing after connecting.
        """,
        doc: .init(
            firesWhen: #"""
                the first MTU exchange on the bearer, on a connection whose set-up is in the capture (ATT_MTU \#
                23 until then), after ATT data already flowed: not discovery, not GATT configuration (a 2-byte \#
                CCCD write, the host's own Service Changed indication). A second exchange (a client sends one \#
                per connection, Core v5.4 Vol 3 Part F 3.4.2.1) is not a late first one
                """#,
            evidence: "the MTU request, the first data PDU"))
    let kinds: [SessionEvent.Kind] = [.mtu]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        // The model keeps the first data PDU of the bearer before its first exchange, when it flowed at
        // ATT_MTU 23 (`ATTBearer.dataBeforeFirstExchange`): a second exchange, an MTU already larger or
        // unknown (mid-connection), GATT configuration (CCCD writes, Service Changed) do not count.
        guard case let .mtuExchanged(c, requestFrame, _, time) = event, c.att.mtuRequests == 1,
              let first = c.att.dataBeforeFirstExchange, first < requestFrame else { return }
        findings.append(Finding(rule: Self.rule.id, severity: .info, connection: c, time: time, frames: [requestFrame, first],
                                message: "MTU exchanged at frame \(requestFrame), after ATT data at frame \(first)"))
    }
}

/// `mtu.capture-truncated`: the capture itself cut values, so MTU rules cannot decide.
final class CaptureTruncatedValues: Detector {
    static let rule = RuleInfo(
        id: "mtu.capture-truncated", severity: .info, title: "Values cut by the capture",
        explanation: """
        The capture kept fewer bytes than were sent (a snap length, or Android's btsnooz summary that keeps 14 bytes of \
        ACL). Value lengths are not decidable from this log, so no MTU finding is made for those frames. Collect a full \
        btsnoop_hci.log (Developer options → Enable Bluetooth HCI snoop log: Enabled, not Filtered) to check them.
        """, actor: .none,
        doc: .init(
            firesWhen: #"""
                values cut by the capture (incl_len < orig_len, btsnooz): MTU rules are not decidable from \#
                this log (once per capture)
                """#,
            evidence: "the first capture-truncated ATT frame"))
    let kinds: [SessionEvent.Kind] = [.mtu]
    private var done = false

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard !done, case let .captureTruncatedATT(c, frame, time) = event else { return }
        done = true
        findings.append(Finding(rule: Self.rule.id, severity: .info, connection: c, time: time, frames: [frame],
                                message: "ATT values are cut by the capture from frame \(frame) on: MTU truncation is not decidable from this log"))
    }
}
