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
        """)
    let kinds: [SessionEvent.Kind] = [.subscription]
    private var failures: [(c: Connection, sub: Subscription, responseFrame: Int, time: Int64, recovered: Bool)] = []

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
        for f in failures {
            guard case let .failed(error) = f.sub.outcome else { continue }
            let what = f.c.gatt(serverIsHost: false)?.owningCharacteristic(of: f.sub.cccdHandle)?.uuid.gattLabel(.characteristic)
                ?? "CCCD 0x\(Format.hex(f.sub.cccdHandle, 4))"
            findings.append(Finding(rule: Self.rule.id, severity: f.recovered ? .info : .warning, connection: f.c, time: f.time,
                                    frames: [f.responseFrame, f.sub.frame],
                                    message: "Subscribing to \(what) failed: \(error)" + (f.recovered ? " (a later attempt succeeded)" : "")))
        }
    }
}

/// `gatt.subscription-unanswered`: a CCCD write that never got a response.
final class SubscriptionUnanswered: Detector {
    static let rule = RuleInfo(
        id: "gatt.subscription-unanswered", severity: .warning, title: "Subscription never answered",
        explanation: """
        A Write Request to a CCCD got no response before the link closed or the capture ended. The app is left waiting \
        for didUpdateNotificationStateFor (iOS) / onDescriptorWrite (Android) and usually blocks its GATT queue.
        """)
    let kinds: [SessionEvent.Kind] = [.connection]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .disconnected(c, _) = event else { return }
        check(c, &findings)
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for c in context.model.live.values.sorted(by: { $0.index < $1.index }) { check(c, &findings) }
    }

    private func check(_ c: Connection, _ findings: inout [Finding]) {
        for s in c.subscriptions.values.sorted(by: { $0.frame < $1.frame }) where s.outcome == .pending {
            findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: c, time: s.time, frames: [s.frame],
                                    message: "CCCD write 0x\(Format.hex(s.value, 4)) to handle 0x\(Format.hex(s.cccdHandle, 4)) was never answered"))
        }
    }
}

/// `gatt.subscription-no-notify-property`: enabling notifications on a characteristic that cannot notify.
final class SubscriptionNoNotifyProperty: Detector {
    static let rule = RuleInfo(
        id: "gatt.subscription-no-notify-property", severity: .warning, title: "Subscription to a characteristic without Notify/Indicate",
        explanation: """
        The CCCD written belongs to a characteristic whose properties have neither Notify nor Indicate, so no value \
        will ever arrive. The app subscribes to the wrong characteristic, or the peripheral's GATT table is wrong.
        """)
    let kinds: [SessionEvent.Kind] = [.subscription]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .subscriptionWritten(c, sub, characteristic) = event, sub.value != 0, let ch = characteristic,
              !ch.canNotify, !ch.canIndicate else { return }
        findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: c, time: sub.time, frames: [sub.frame],
                                message: "Notifications enabled on \(ch.uuid.gattLabel(.characteristic)) @0x\(Format.hex(ch.valueHandle, 4)), which has neither Notify nor Indicate"))
    }
}

/// `gatt.subscription-silent`: a subscription that was accepted but never delivered anything.
final class SubscriptionSilent: Detector {
    static let rule = RuleInfo(
        id: "gatt.subscription-silent", severity: .warning, title: "Subscribed, but nothing arrived",
        explanation: """
        Notifications or indications were enabled and the server accepted, yet none arrived for that characteristic \
        before the subscription ended. The peripheral firmware may not send while the value is unchanged, may send on \
        another handle, or may have lost the subscription (a non-bonded peer forgets CCCDs on reconnect).
        """,
        thresholds: [.init(name: "wait", defaultValue: 5, unit: "s", meaning: "time a subscription must last before silence counts")])
    let kinds: [SessionEvent.Kind] = [.subscription, .connection]

    private struct Active { var c: Connection; var sub: Subscription; var valueHandle: UInt16; var responseFrame: Int; var since: Int64 }
    private var active: [Active] = []

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        switch event {
        case let .subscriptionAnswered(c, sub, responseFrame, time):
            guard sub.outcome == .accepted else { return }
            if sub.value == 0 {
                settle(c, cccd: sub.cccdHandle, at: time, context, &findings)
                return
            }
            active.removeAll { $0.c === c && $0.sub.cccdHandle == sub.cccdHandle }
            let server = c.gatt(serverIsHost: false)?.owningCharacteristic(of: sub.cccdHandle)
                ?? c.gatt(serverIsHost: true)?.owningCharacteristic(of: sub.cccdHandle)
            active.append(Active(c: c, sub: sub, valueHandle: server?.valueHandle ?? sub.cccdHandle &- 1,
                                 responseFrame: responseFrame, since: time))
        case let .disconnected(c, _):
            for a in active where a.c === c { check(a, end: c.disconnectTime ?? a.since, context, &findings) }
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
        findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: a.c, time: a.since, frames: [a.responseFrame, a.sub.frame],
                                message: "Subscribed to handle 0x\(Format.hex(a.valueHandle, 4)) but nothing arrived in \(Format.seconds(end - a.since))"))
    }
}

/// `gatt.unsubscribed-notification`: values arriving for a characteristic nobody subscribed to here.
final class UnsubscribedNotification: Detector {
    static let rule = RuleInfo(
        id: "gatt.unsubscribed-notification", severity: .info, title: "Notification without a subscription in the capture",
        explanation: """
        Notifications or indications arrived for a characteristic whose CCCD was never written in this capture. Either \
        the peer is bonded and remembers the subscription (fine), the capture began after subscribing, or the peripheral \
        sends without being asked (a firmware bug that wastes air time and confuses apps).
        """)
    let kinds: [SessionEvent.Kind] = [.subscription, .attValueFirst, .attIndication]
    /// Value handles subscribed to, per peer (a bonded peer keeps CCCDs across connections).
    private struct Key: Hashable { var peer: UInt64; var connection: Int; var handle: UInt16 }
    private var subscribed = Set<Key>()

    private static func key(_ c: Connection, _ handle: UInt16) -> Key {
        // Keyed by peer address when known, else by the connection.
        Key(peer: c.peerAddress?.value ?? 0, connection: c.peerAddress == nil ? c.index : 0, handle: handle)
    }

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        switch event {
        case let .subscriptionWritten(c, sub, characteristic):
            subscribed.insert(Self.key(c, characteristic?.valueHandle ?? sub.cccdHandle &- 1))
        case let .attValue(c, handle, _, indication, frame, time, _, _, first):
            // Once per handle and connection: only the first value of a handle is looked at.
            guard first, !c.inferred, !subscribed.contains(Self.key(c, handle)) else { return }
            findings.append(Finding(rule: Self.rule.id, severity: .info, connection: c, time: time, frames: [frame],
                                    message: "\(indication ? "Indication" : "Notification") for handle 0x\(Format.hex(handle, 4)) whose CCCD was never written in the capture"))
        default:
            break
        }
    }
}
