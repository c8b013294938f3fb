import BLEProtocol

/// `mtu.truncated-read`: a Read Response that filled the MTU and was never continued with Read Blob.
final class TruncatedRead: Detector {
    static let rule = RuleInfo(
        id: "mtu.truncated-read", severity: .warning, title: "Value cut at ATT_MTU−1 (no Read Blob)",
        explanation: """
        A Read Response carried exactly ATT_MTU−1 bytes — the most it can hold — and no Read Blob Request followed for \
        that handle, so the rest of the value was never read: the classic "my characteristic is cut at 22 bytes". \
        iOS and Android read long values for you through readValue/readCharacteristic; this happens with custom \
        stacks, with a firmware that answers Read Blob with an error, or when the value is read by a raw ATT request. \
        Exchange a larger MTU first, or continue with Read Blob (Core v5.4 Vol 3 Part G 4.8.3).
        """)
    let kinds: [SessionEvent.Kind] = [.attResponse, .attRequest, .connection]
    private struct Pending { var c: Connection; var handle: UInt16; var responseFrame: Int; var requestFrame: Int; var time: Int64; var length: Int }
    private var pending = ConnectionState<Pending>()
    private var open: [Connection] = []

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        switch event {
        case let .attResponse(c, request, opcode, length, frame, time, _):
            guard opcode == .readResponse, let r = request, r.opcode == .readRequest, let h = r.handle else { return }
            flush(c, &findings)
            if length == c.att.mtu - 1 {
                pending[c] = Pending(c: c, handle: h, responseFrame: frame, requestFrame: r.frame, time: time, length: length)
                open.append(c)
            }
        case let .attRequest(c, p, _, _):
            guard !open.isEmpty, let read = pending[c] else { return }
            if p.opcode == .readBlobRequest, p.handle == read.handle {
                pending[c] = nil
            } else {
                flush(c, &findings)
            }
        case let .disconnected(c, _):
            flush(c, &findings)
        default:
            break
        }
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for c in open.sorted(by: { $0.index < $1.index }) { flush(c, &findings) }
    }

    private func flush(_ c: Connection, _ findings: inout [Finding]) {
        guard !open.isEmpty, let p = pending[c] else { return }
        pending[c] = nil
        open.removeAll { $0 === c }
        let name = c.gatt(serverIsHost: false)?.describe(p.handle) ?? "handle 0x\(Format.hex(p.handle, 4))"
        findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: c, time: p.time, frames: [p.responseFrame, p.requestFrame],
                                message: "Read of \(name) returned \(p.length) bytes (ATT_MTU \(c.att.mtu) − 1) and was never continued with Read Blob: the value is probably cut"))
    }
}

/// `mtu.truncated-notification`: notifications that fill the default or a too-small MTU.
final class TruncatedNotification: Detector {
    static let rule = RuleInfo(
        id: "mtu.truncated-notification", severity: .warning, title: "Notifications cut at ATT_MTU−3",
        explanation: """
        Notifications or indications carried exactly ATT_MTU−3 bytes on a bearer where the MTU was never exchanged (so \
        it is 23) or where the local side offered less than the peer could take. Servers truncate values to ATT_MTU−3 \
        silently. Request a larger MTU right after connecting (Android: requestMtu(247..517); iOS negotiates it \
        itself, check maximumWriteValueLength), or keep values within 20 bytes.
        """)
    let kinds: [SessionEvent.Kind] = [.attValueFull, .attIndication]
    private var reported = ConnectionState<Set<UInt16>>()

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .attValue(c, handle, length, indication, frame, time, _, _, _) = event, length == c.att.mtu - 3 else { return }
        let exchanged = c.att.mtuFrame != nil
        let offered = max(Int(c.att.clientMTU ?? 0), Int(c.att.serverMTU ?? 0))
        guard !exchanged || c.att.mtu < offered else { return }
        var seen = reported[c] ?? []
        guard seen.insert(handle).inserted else { return }
        reported[c] = seen
        let why = exchanged ? "ATT_MTU \(c.att.mtu) is smaller than the \(offered) offered" : "the MTU was never exchanged (23)"
        findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: c, time: time, frames: [frame],
                                message: "\(indication ? "Indication" : "Notification") of handle 0x\(Format.hex(handle, 4)) is \(length) bytes = ATT_MTU − 3 and \(why): the value is probably truncated"))
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
        """)
    let kinds: [SessionEvent.Kind] = [.attWrite]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .attWrite(c, handle, length, command, frame, time, _) = event, length > c.att.mtu - 3 else { return }
        findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: c, time: time, frames: [frame],
                                message: "\(command ? "Write Command" : "Write Request") of \(length) bytes to handle 0x\(Format.hex(handle, 4)) exceeds ATT_MTU \(c.att.mtu) − 3"))
    }
}

/// `mtu.late-exchange`: the MTU was exchanged after data already flowed.
final class LateMTUExchange: Detector {
    static let rule = RuleInfo(
        id: "mtu.late-exchange", severity: .info, title: "MTU exchanged after data",
        explanation: """
        The MTU exchange happened after ATT data (other than discovery) was already sent on the bearer, so those first \
        values were limited to 20 bytes. Exchange the MTU first thing after connecting.
        """)
    let kinds: [SessionEvent.Kind] = [.mtu]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        // The model keeps the first data PDU of the bearer (`ATTBearer.firstDataFrame`).
        guard case let .mtuExchanged(c, requestFrame, _, time) = event, let first = c.att.firstDataFrame, first < requestFrame else { return }
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
        """)
    let kinds: [SessionEvent.Kind] = [.mtu]
    private var done = false

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard !done, case let .captureTruncatedATT(c, frame, time) = event else { return }
        done = true
        findings.append(Finding(rule: Self.rule.id, severity: .info, connection: c, time: time, frames: [frame],
                                message: "ATT values are cut by the capture from frame \(frame) on: MTU truncation is not decidable from this log"))
    }
}
