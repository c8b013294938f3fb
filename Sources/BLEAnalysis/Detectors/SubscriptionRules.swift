import BLEProtocol

/// `gatt.subscription-failed`: a CCCD write answered with an Error Response.
final class SubscriptionFailed: Detector {
    static let rule = RuleInfo(
        id: "gatt.subscription-failed", severity: .warning, title: "Subscription refused",
        explanation: """
        Writing the Client Characteristic Configuration descriptor (enabling notifications/indications) was answered \
        with an error. Insufficient Authentication or Encryption means the characteristic needs pairing: on iOS the \
        system pairs when it sees that error only if the peripheral asks for it — make sure the CCCD permission matches; \
        on Android call createBond() first, or retry setCharacteristicNotification + the descriptor write after \
        bonding. Other errors usually mean the wrong handle or a server bug. Info when a later write succeeded.
        """, actor: .app,
        doc: .init(
            severity: "warning (info if a later CCCD write on the same handle succeeds)",
            firesWhen: #"""
                a CCCD (0x2902) write answered by Error Response, by either side (the peer may subscribe to \#
                the phone's own server); who acts: the client for security errors (pair first), the server \#
                otherwise
                """#,
            evidence: "the Error Response, the write request"))
    let kinds: [SessionEvent.Kind] = [.subscription]
    private var failures: [(c: Connection, sub: Subscription, responseFrame: Int, time: Int64, recovered: Bool)] = []
    /// A failure is decided at the end (a later write on its link may succeed), or when its connection
    /// is summarised.
    func retire(_ c: Connection, _ context: DetectorContext, _ findings: inout [Finding]) {
        for f in failures where f.c === c { report(f, &findings) }
        failures.removeAll { $0.c === c }
    }

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .subscriptionAnswered(c, sub, responseFrame, time) = event else { return }
        switch sub.outcome {
        case .failed:
            failures.append((c, sub, responseFrame, time, false))
        case .accepted where sub.value != 0:
            for i in failures.indices where failures[i].c === c && failures[i].sub.cccdHandle == sub.cccdHandle {
                failures[i].recovered = true
            }
        default:
            break
        }
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for f in failures { report(f, &findings) }
    }

    private func report(_ f: (c: Connection, sub: Subscription, responseFrame: Int, time: Int64, recovered: Bool), _ findings: inout [Finding]) {
        guard case let .failed(error) = f.sub.outcome else { return }
        let what = Subscriptions.owner(f.c, f.sub)
        // Who acts: a security error asks the client to pair first; any other refusal is the server's.
        let clientMustPair = error.isSecurityError
        let actor: Actor = f.sub.serverIsHost ? (clientMustPair ? .peripheralFirmware : .app) : (clientMustPair ? .app : .peripheralFirmware)
        let who: FindingMessage = f.sub.serverIsHost ? "\(peer: f.c) subscribing to the host's \(what)" : "Subscribing to \(what) of \(peer: f.c)"
        findings.append(Finding(rule: Self.rule.id, severity: f.recovered ? .info : .warning, connection: f.c, time: f.time,
                                frames: [f.responseFrame, f.sub.frame],
                                message: "\(who) failed: \(error)" + (f.recovered ? " (a later attempt succeeded)" : ""), actor: actor))
    }
}

/// `gatt.subscription-unanswered`: a CCCD write that never got a response.
final class SubscriptionUnanswered: Detector {
    static let rule = RuleInfo(
        id: "gatt.subscription-unanswered", severity: .warning, title: "Subscription never answered",
        explanation: """
        A Write Request to a CCCD got no response before the link closed or the capture ended. The app is left waiting \
        for didUpdateNotificationStateFor (iOS) / onDescriptorWrite (Android) and usually blocks its GATT queue.
        """, actor: .peripheralFirmware,
        doc: .init(
            firesWhen: #"""
                a CCCD write request with no response for 30 s with the link up, or before the link was lost; \#
                one pending when the capture ends or the link is closed on purpose is not decided
                """#,
            evidence: "the write request"))
    let kinds: [SessionEvent.Kind] = [.connection]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .disconnected(c, _) = event else { return }
        check(c, context, &findings)
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for c in context.model.live.values.sorted(by: { $0.index < $1.index }) { check(c, context, &findings) }
    }

    private func check(_ c: Connection, _ context: DetectorContext, _ findings: inout [Finding]) {
        for s in c.subscriptions.values.sorted(by: { $0.frame < $1.frame }) where s.outcome == .pending {
            let end = c.lifecycle.disconnectTime ?? context.captureEnd
            // Unanswered only when the link stayed up long enough to tell: 30 s (the ATT transaction
            // timeout), or a link lost with it. Otherwise the capture or the link ended first.
            let lost = c.lifecycle.disconnectReason.map { Disconnects.warnings.contains($0.rawValue) } ?? false
            guard end - s.time >= OutstandingRequests.transactionTimeout || lost else { continue }
            let server: Actor = s.serverIsHost ? .app : .peripheralFirmware
            findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: c, time: s.time, frames: [s.frame],
                                    message: "CCCD write 0x\(Format.hex(s.value, 4)) to \(Subscriptions.owner(c, s)) was never answered"
                                        + (lost ? " before the link was lost" : " within 30 s"), actor: server))
        }
    }
}

/// `gatt.subscription-no-notify-property`: enabling notifications on a characteristic that cannot notify.
/// Information, not a warning: a server that accepts the write has a descriptor there on purpose (a
/// vendor's own switch whose data arrives on another characteristic is common), and one that refuses
/// it is `gatt.subscription-failed`. The capture proves only that the properties lack Notify/Indicate.
final class SubscriptionNoNotifyProperty: Detector {
    static let rule = RuleInfo(
        id: "gatt.subscription-no-notify-property", severity: .info, title: "Subscription to a characteristic without Notify/Indicate",
        explanation: """
        The CCCD written belongs to a characteristic whose properties have neither Notify nor Indicate, so that \
        characteristic itself will not send values. Often deliberate: vendors use such a descriptor as a switch and \
        deliver the data on another characteristic. If the app expected values of this one, it subscribes to the wrong \
        characteristic, or the peripheral's GATT table is wrong.
        """, actor: .none,
        doc: .init(
            firesWhen: #"""
                a CCCD write enabling notifications/indications on a characteristic whose properties (known \#
                from discovery) lack Notify/Indicate, accepted by the server (a Write Command, or a Write \#
                Response; a refusal is `gatt.subscription-failed`): often a vendor switch whose data arrives \#
                on another characteristic
                """#,
            evidence: "the write request, the write response"))
    let kinds: [SessionEvent.Kind] = [.subscription]
    private var written: [(c: Connection, sub: Subscription, ch: GATTDatabase.Characteristic)] = []
    func keeps(_ c: Connection, _ context: DetectorContext) -> Bool { written.contains { $0.c === c } }

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        switch event {
        case let .subscriptionWritten(c, sub, characteristic):
            guard sub.value != 0, let ch = characteristic, !ch.canNotify, !ch.canIndicate else { return }
            if sub.outcome == .pending { written.append((c, sub, ch)) } else { report(c, sub, ch, accepted: nil, &findings) }
        case let .subscriptionAnswered(c, sub, responseFrame, _):
            guard let i = written.firstIndex(where: { $0.c === c && $0.sub.frame == sub.frame }) else { return }
            let w = written.remove(at: i)
            // Refused: `gatt.subscription-failed` says so.
            if sub.outcome == .accepted { report(c, w.sub, w.ch, accepted: responseFrame, &findings) }
        case let .disconnected(c, _):
            written.removeAll { $0.c === c }
        default:
            break
        }
    }

    private func report(_ c: Connection, _ sub: Subscription, _ ch: GATTDatabase.Characteristic, accepted: Int?, _ findings: inout [Finding]) {
        let server: FindingMessage = sub.serverIsHost ? "the host" : .peer(c)
        let answer: FindingMessage = accepted.map { _ in "; \(server) accepted it (a vendor switch: the data may arrive on another characteristic)" } ?? ""
        findings.append(Finding(rule: Self.rule.id, severity: .info, connection: c, time: sub.time, frames: [sub.frame] + (accepted.map { [$0] } ?? []),
                                message: "\(sub.serverIsHost ? .peer(c) : "The host" as FindingMessage) enabled notifications on \(ch.uuid.gattLabel(.characteristic)) @0x\(Format.hex(ch.valueHandle, 4)), which has neither Notify nor Indicate" + answer,
                                actor: Actor.none))
    }
}

/// `gatt.subscription-silent`: a subscription that was accepted but never delivered anything.
/// Information only: silence after subscribing is normal for many characteristics (Service Changed,
/// status values that notify on change, a device that reboots into a bootloader after a
/// control-point write), and nothing in a capture says data was due.
final class SubscriptionSilent: Detector {
    static let rule = RuleInfo(
        id: "gatt.subscription-silent", severity: .info, title: "Subscribed, but nothing arrived",
        explanation: """
        Notifications or indications were enabled and the server accepted, yet none arrived for that characteristic \
        before the subscription ended. Often normal (values that change rarely, Service Changed). If the app expected \
        data: the server may not send while the value is unchanged, may send on another handle, or may have lost the \
        subscription (a non-bonded peer forgets CCCDs on reconnect).
        """,
        thresholds: [.init(name: "wait", defaultValue: 5, unit: "s", meaning: "time a subscription must last before silence counts")],
        actor: .none,
        doc: .init(
            firesWhen: #"""
                notifications/indications enabled and acknowledged, but none arrived for that characteristic \#
                before the CCCD was cleared, the link closed or the capture ended (only if ≥ `wait`, default 5 \#
                s, passed). Information only: silence is normal for Service Changed, values that notify on \#
                change, a device rebooting into DFU
                """#,
            evidence: "the write response, the write request"))
    let kinds: [SessionEvent.Kind] = [.subscription, .connection]

    private struct Active { var c: Connection; var sub: Subscription; var valueHandle: UInt16; var responseFrame: Int; var since: Int64 }
    private var active: [Active] = []
    func keeps(_ c: Connection, _ context: DetectorContext) -> Bool { active.contains { $0.c === c } }

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        switch event {
        case let .subscriptionAnswered(c, sub, responseFrame, time):
            guard sub.outcome == .accepted else { return }
            if sub.value == 0 {
                settle(c, cccd: sub.cccdHandle, at: time, context, &findings)
                return
            }
            active.removeAll { $0.c === c && $0.sub.cccdHandle == sub.cccdHandle }
            let owner = c.gatt(serverIsHost: sub.serverIsHost)?.owningCharacteristic(of: sub.cccdHandle)
            active.append(Active(c: c, sub: sub, valueHandle: owner?.valueHandle ?? sub.cccdHandle &- 1,
                                 responseFrame: responseFrame, since: time))
        case let .disconnected(c, _):
            for a in active where a.c === c { check(a, end: c.lifecycle.disconnectTime ?? a.since, context, &findings) }
            active.removeAll { $0.c === c }
        default:
            break
        }
    }

    private func settle(_ c: Connection, cccd: UInt16, at time: Int64, _ context: DetectorContext, _ findings: inout [Finding]) {
        for a in active where a.c === c && a.sub.cccdHandle == cccd { check(a, end: time, context, &findings) }
        active.removeAll { $0.c === c && $0.sub.cccdHandle == cccd }
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for a in active { check(a, end: context.captureEnd, context, &findings) }
    }

    private func check(_ a: Active, end: Int64, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard end - a.since >= micros("wait", context) else { return }
        // Did any value arrive for the handle after the subscription was accepted? (The model keeps it.)
        if let s = a.c.valueStreams[a.valueHandle], s.lastTime >= a.since, s.lastFrame > a.responseFrame { return }
        let what = Subscriptions.owner(a.c, a.sub)
        let server: FindingMessage = a.sub.serverIsHost ? "the host" : .peer(a.c)
        findings.append(Finding(rule: Self.rule.id, severity: .info, connection: a.c, time: a.since, frames: [a.responseFrame, a.sub.frame],
                                message: "Subscribed to \(what); \(server) sent nothing for it in the \(Format.duration(end - a.since)) that followed"))
    }
}

extension Connection {
    /// Encrypted on this connection without pairing on it: a key stored by an earlier pairing, so the
    /// peers are bonded and the server keeps the client's CCCDs (Core v5.4 Vol 3 Part G 3.3.3.3).
    var encryptedWithStoredKey: Bool { encryption.everEncrypted && smp.pairingRequests == 0 }
    /// The frame where the host, as central, started encryption (LE Enable Encryption with its LTK)
    /// with no pairing on this connection, a start the link lost before it completed: the host holds
    /// a bond with the peer although the link never got encrypted.
    var encryptionStartedWithStoredKey: Int? {
        guard role == .central, !encryption.everEncrypted, smp.pairingRequests == 0 else { return nil }
        return forensics.pendingEncryption?.frame
    }
}

/// Names for subscription findings.
enum Subscriptions {
    /// "Heart Rate Measurement (0x2A37) @0x0010" (the characteristic owning the CCCD), or "CCCD 0x0011".
    static func owner(_ c: Connection, _ sub: Subscription) -> String {
        if let ch = c.gatt(serverIsHost: sub.serverIsHost)?.owningCharacteristic(of: sub.cccdHandle) {
            return ch.uuid.gattLabel(.characteristic) + " @0x" + Format.hex(ch.valueHandle, 4)
        }
        return "CCCD 0x" + Format.hex(sub.cccdHandle, 4)
    }
}

/// `gatt.unsubscribed-notification`: values arriving for a characteristic nobody subscribed to here.
/// A warning when the capture proves the server had no subscription to serve: the connection's
/// set-up is in the capture, the link was never encrypted (so the client is not a bonded one whose
/// CCCD the server keeps, Core v5.4 Vol 3 Part G 3.3.3.3), and the client never wrote the CCCD on this
/// connection. Information otherwise (bonded, or the capture began after subscribing).
final class UnsubscribedNotification: Detector {
    static let rule = RuleInfo(
        id: "gatt.unsubscribed-notification", severity: .warning, title: "Notification without a subscription",
        explanation: """
        Notifications or indications arrived for a characteristic whose CCCD was not written on this connection. A \
        server keeps CCCDs only for bonded clients; on a new, unencrypted connection it must not send until the \
        client subscribes (Core v5.4 Vol 3 Part G 3.3.3.3). Sending anyway — usually because the firmware keeps the \
        subscription of an earlier connection — wastes air time and delivers values the app did not ask for (Android \
        drops them without a registered callback, iOS without setNotifyValue). Clear CCCDs on disconnect for \
        non-bonded clients. Information when the peer may be bonded or the capture began later.
        """, actor: .peripheralFirmware,
        doc: .init(
            severity: "warning / info",
            firesWhen: #"""
                warning: a notification/indication **from the peer** on a connection whose set-up is in the \#
                capture, never encrypted and without SMP (so not a bonded client whose CCCD the server keeps, \#
                Core v5.4 Vol 3 Part G 3.3.3.3), before any CCCD write on it (on an air capture: no packet \#
                lost before it). Info: the peer may be bonded, or the host's own server sent it (e.g. \#
                Android's Service Changed). Mid-connection captures: nothing
                """#,
            evidence: "the first such value"))
    let kinds: [SessionEvent.Kind] = [.subscription, .attValueFirst, .attIndication, .connection]
    /// Value handles subscribed to, per peer (a bonded peer keeps CCCDs across connections).
    private struct Key: Hashable { var peer: UInt64; var connection: Int; var handle: UInt16 }
    private var subscribed = Set<Key>()
    /// Value handles subscribed to on each connection.
    private var subscribedHere = Set<Key>()
    private struct Pending { var c: Connection; var handle: UInt16; var indication: Bool; var frame: Int; var time: Int64; var earlier: Bool }
    private var pending: [Pending] = []
    func keeps(_ c: Connection, _ context: DetectorContext) -> Bool { pending.contains { $0.c === c } }

    private static func key(_ c: Connection, _ handle: UInt16) -> Key {
        // Keyed by peer address when known, else by the connection.
        Key(peer: c.peerAddress?.value ?? 0, connection: c.peerAddress == nil ? c.index : 0, handle: handle)
    }

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        switch event {
        case let .subscriptionWritten(c, sub, characteristic):
            let handle = characteristic?.valueHandle ?? sub.cccdHandle &- 1
            subscribed.insert(Self.key(c, handle))
            subscribedHere.insert(Key(peer: 0, connection: c.index, handle: handle))
        case let .attValue(c, handle, _, indication, frame, time, sent, _, first):
            // Once per handle and connection: only the first value of a handle is looked at.
            guard first, !c.lifecycle.inferred, !subscribedHere.contains(Key(peer: 0, connection: c.index, handle: handle)) else { return }
            pending.append(Pending(c: c, handle: handle, indication: indication, frame: frame, time: time,
                                   earlier: subscribed.contains(Self.key(c, handle))))
            _ = sent
        case let .disconnected(c, _):
            decide(c, &findings)
        default:
            break
        }
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for c in context.model.live.values.sorted(by: { $0.index < $1.index }) { decide(c, &findings) }
    }

    private func decide(_ c: Connection, _ findings: inout [Finding]) {
        for p in pending where p.c === c {
            let hostServes = c.valueStreams[p.handle]?.sentByHost ?? false
            let what = c.attributeName(p.handle, serverIsHost: hostServes)
            let kind = p.indication ? "Indication" : "Notification"
            let sender: FindingMessage = hostServes ? "the host" : .peer(c)
            let neverEncrypted = !c.encryption.encrypted && c.smp.pairingRequests == 0 && !c.encryption.everEncrypted
            // Proof needs the peer as the sender (the host's own GATT server is the OS's, e.g. Service
            // Changed), and, on an air capture, no packet lost before it (the CCCD write may be among them).
            if neverEncrypted, !hostServes, c.snifferLoss.firstCaptureLossFrame == 0 || c.snifferLoss.firstCaptureLossFrame > p.frame {
                let why = p.earlier ? "; the CCCD was written on an earlier connection, which an unbonded server must forget" : ""
                findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: c, time: p.time, frames: [p.frame],
                                        message: "\(kind) of \(what) from \(sender) on a new, unencrypted connection before any CCCD write on it\(why)",
                                        actor: hostServes ? .app : .peripheralFirmware))
            } else if !p.earlier {
                let may = c.encryptedWithStoredKey
                    ? "the link was encrypted with a stored key: bonded, so the server keeps the CCCD of an earlier connection"
                    : c.encryptionStartedWithStoredKey.map {
                        "encryption with a stored key started at frame \($0): bonded, so the server keeps the CCCD of an earlier connection"
                    } ?? (hostServes ? "the host's own GATT server sent it unasked" : "the peer may be bonded")
                findings.append(Finding(rule: Self.rule.id, severity: .info, connection: c, time: p.time, frames: [p.frame],
                                        message: "\(kind) of \(what) from \(sender) whose CCCD was never written on this connection (\(may))",
                                        actor: Actor.none))
            }
        }
        pending.removeAll { $0.c === c }
    }
}
