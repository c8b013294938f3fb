import BLEProtocol

/// `hci.command-timeout`: a command the controller answered (Command Complete or Command Status) only
/// after `timeout` (default 2 s, Linux's HCI_CMD_TIMEOUT in include/net/bluetooth/hci.h), or never
/// although it sent other events ≥ `timeout` later; and Num_HCI_Command_Packets 0 holding the host off
/// for ≥ `held` (default 2 s; Linux gives up after HCI_NCMD_TIMEOUT, 4 s, and injects a Hardware Error).
/// A command still waiting when the capture ends is not decidable. Vendor commands (OGF 0x3F) may be
/// answered by a vendor event instead (a firmware download that reboots the controller): information.
final class CommandTimeout: Detector {
    static let rule = RuleInfo(
        id: "hci.command-timeout", severity: .warning, title: "Controller slow to answer commands",
        explanation: """
        Every HCI command gets a Command Complete or Command Status (Core v5.4 Vol 4 Part E 4.4); hosts give the \
        controller 2 s (Linux's HCI_CMD_TIMEOUT), then report a timeout and often reset it. A late or missing \
        answer blocks every later command of the host (connections, scanning, encryption); Num_HCI_Command_Packets 0 \
        forbids the host to send any. The controller's firmware is stuck or busy: report it to the phone or adapter \
        maker, with this log.
        """, thresholds: [.init(name: "timeout", defaultValue: 2, unit: "s", meaning: "wait for a command's answer"),
                          .init(name: "held", defaultValue: 2, unit: "s", meaning: "time the host may not send commands (Num_HCI_Command_Packets 0)")],
        actor: .controller,
        doc: .init(
            severity: "warning (info for vendor commands)",
            firesWhen: #"""
                a command answered by Command Complete / Command Status only ≥ `timeout` (default 2 s: Linux's \#
                HCI_CMD_TIMEOUT, include/net/bluetooth/hci.h) after it was sent, or never although the \#
                controller sent other events ≥ `timeout` later (one still waiting at the capture's end is not \#
                decidable); Num_HCI_Command_Packets 0 for ≥ `held` (default 2 s; Linux injects a Hardware \#
                Error after HCI_NCMD_TIMEOUT, 4 s) (Vol 4 Part E 4.4). Host Number Of Completed Packets has no \#
                answer (7.3.40); a vendor command (OGF 0x3F) may be answered by a vendor event (firmware \#
                downloads reboot the controller): information
                """#,
            evidence: "the command, its answer"))
    let kinds: [SessionEvent.Kind] = [.controller]
    private struct Late {
        var opcode: HCIOpcode
        var command: LinkForensics.Mark
        var answer: LinkForensics.Mark?
    }
    private var late: [Late] = []
    private var held: [(adapter: UInt16, from: LinkForensics.Mark, to: LinkForensics.Mark)] = []

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        switch event {
        case let .commandAnswered(_, opcode, command, answer, _) where answer.time - command.time >= micros("timeout", context):
            if late.count < 1000 { late.append(Late(opcode: opcode, command: command, answer: answer)) }
        case let .commandsHeld(adapter, from, to) where to.time - from.time >= micros("held", context):
            if held.count < 1000 { held.append((adapter, from, to)) }
        default:
            break
        }
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        let timeout = micros("timeout", context)
        for (adapter, list) in context.model.controller.pending.sorted(by: { $0.key < $1.key }) {
            guard let last = context.model.controller.lastEvent[adapter] else { continue }
            for issued in list where last.time - issued.mark.time >= timeout {
                late.append(Late(opcode: issued.opcode, command: issued.mark, answer: nil))
            }
        }
        for l in late.sorted(by: { $0.command.frame < $1.command.frame }) {
            let name = "\(HCIDecoder.commandName(l.opcode)) (0x\(Format.hex(l.opcode.rawValue, 4)))"
            let message: FindingMessage = l.answer.map { "\(name) answered only \(Format.duration($0.time - l.command.time)) after it was sent (hosts time out at 2 s)" }
                ?? "\(name) never answered: the controller sent other events until \(Format.duration((context.model.controller.lastEvent.values.map(\.time).max() ?? l.command.time) - l.command.time)) later"
            findings.append(Finding(rule: Self.rule.id, severity: l.opcode.isVendor ? .info : .warning, connection: nil, time: l.command.time,
                                    frames: [l.command.frame] + (l.answer.map { [$0.frame] } ?? []), message: message))
        }
        for h in held {
            findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: nil, time: h.from.time, frames: [h.from.frame, h.to.frame],
                                    message: "The controller allowed no command (Num_HCI_Command_Packets 0) for \(Format.duration(h.to.time - h.from.time))"))
        }
    }
}

/// `hci.config-refused`: the controller refused a command that configures what the host gets from it.
/// From the first refusal: the loss lasts as long as the controller runs.
final class ConfigRefused: Detector {
    static let rule = RuleInfo(
        id: "hci.config-refused", severity: .warning, title: "Controller refused the host's configuration",
        explanation: """
        The controller refused a command the host uses to set itself up: an event mask (events left out are never \
        sent, Core v5.4 Vol 4 Part E 7.3.1, 7.3.69, 7.8.1: e.g. LE Connection Complete, LE Long Term Key Request), a \
        buffer size read (the host cannot do flow control, 7.4.5, 7.8.2), LE or Secure Simple Pairing / Secure \
        Connections host support (7.3.59, 7.3.79, 7.3.92: the controller keeps the feature off). The host works with \
        less than it thinks; report it to the stack or controller maker with this log.
        """, actor: .controller,
        doc: .init(
            severity: #"""
                warning (info for Unknown HCI Command 0x01: the controller does not have the command — an \#
                older version — and the host sent it without reading Supported Commands)
                """#,
            firesWhen: #"""
                from the first refusal (Command Complete / Status with an error) of a command whose refusal \#
                takes something from the host: Set Event Mask, Set Event Mask Page 2, LE Set Event Mask \#
                (events outside the default mask never come: e.g. LE Enhanced Connection Complete, Data Length \#
                Change, PHY Update Complete, Vol 4 Part E 7.3.1, 7.3.69, 7.8.1), Read Buffer Size / LE Read \#
                Buffer Size v1/v2 (no flow control, 7.4.5, 7.8.2), Write LE Host Supported (7.3.79), Write \#
                Simple Pairing Mode (legacy PIN pairing, 7.3.59), Write Secure Connections Host Support \#
                (7.3.92). Not LE Set Host Feature: hosts probe optional features with it. One finding per \#
                command with the count
                """#,
            evidence: "the refusal, the command"))
    let kinds: [SessionEvent.Kind] = [.controller]
    /// Commands whose refusal takes something from the host, and what.
    static let deprives: [HCIOpcode: String] = [
        .setEventMask: "events outside the controller's default mask (LE Meta among them) are never sent",
        .setEventMaskPage2: "the page 2 events the host asked for are never sent",
        .leSetEventMask: "only the default LE events (Connection Complete, Advertising Report, Connection Update Complete, Read Remote Features Complete, Long Term Key Request) are sent; those the host enabled beyond them never come (a masked Remote Connection Parameter Request makes the link layer reject the peer's parameter requests, Core v5.4 Vol 6 Part B 5.1.7.1)",
        .readBufferSize: "the host does not know the controller's ACL buffers and cannot do flow control",
        .leReadBufferSize: "the host does not know the controller's LE buffers and cannot do flow control",
        .leReadBufferSizeV2: "the host does not know the controller's LE buffers and cannot do flow control",
        .writeLEHostSupported: "the controller does not enable LE for this host",
        .writeSimplePairingMode: "BR/EDR pairing falls back to legacy PIN pairing",
        .writeSecureConnectionsHostSupport: "BR/EDR links cannot use Secure Connections (P-256, AES-CCM)",
    ]
    private var seen: [HCIOpcode: (first: LinkForensics.Mark, command: LinkForensics.Mark, status: HCIStatus, count: Int)] = [:]
    private var order: [HCIOpcode] = []

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .commandAnswered(_, opcode, command, answer, status?) = event, status != .success, Self.deprives[opcode] != nil else { return }
        if var s = seen[opcode] { s.count += 1; seen[opcode] = s; return }
        seen[opcode] = (answer, command, status, 1)
        order.append(opcode)
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for opcode in order {
            guard let s = seen[opcode], let what = Self.deprives[opcode] else { continue }
            let times = s.count > 1 ? " (\(s.count) times)" : ""
            // Unknown HCI Command: this controller does not have the command (an older version); the host
            // should have read Supported Commands first. The feature is absent, not refused.
            let absent = s.status == .unknownHCICommand
            let message: FindingMessage = absent
                ? "The controller does not have \(HCIDecoder.commandName(opcode)) (Unknown HCI Command, 0x01)\(times): \(what); the host sent it without checking the controller's Supported Commands"
                : "The controller refused \(HCIDecoder.commandName(opcode)) with \(s.status.name) (0x\(Format.hex(s.status.rawValue)))\(times): \(what)"
            var f = Finding(rule: Self.rule.id, severity: absent ? .info : .warning, connection: nil, time: s.first.time,
                            frames: [s.first.frame, s.command.frame], message: message, actor: absent ? .hostStack : nil)
            f.status = s.status.rawValue
            findings.append(f)
        }
    }
}

/// `hci.hardware-error`: the controller reported a Hardware Error (Core v5.4 Vol 4 Part E 7.7.16).
final class HardwareError: Detector {
    static let rule = RuleInfo(
        id: "hci.hardware-error", severity: .warning, title: "Controller hardware error",
        explanation: """
        The controller sent a Hardware Error event: its firmware or the transport failed. Hosts reset the controller \
        (every link ends, scanning and advertising stop) and may restart Bluetooth. The code is the maker's; report \
        it with this log. Linux also injects one itself after a command timeout (HCI_NCMD_TIMEOUT).
        """, actor: .controller,
        doc: .init(
            firesWhen: #"""
                the controller sent Hardware Error (Vol 4 Part E 7.7.16): its firmware or transport failed; \#
                the host resets it and every link ends
                """#,
            evidence: "the event"))
    let kinds: [SessionEvent.Kind] = [.controller]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .hardwareError(_, frame, time, code) = event else { return }
        let open = context.model.live.values.filter { $0.lifecycle.disconnectFrame == nil }.count
        findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: nil, time: time, frames: [frame],
                                message: "The controller reported Hardware Error 0x\(Format.hex(code)) with \(open) link\(open == 1 ? "" : "s") open"))
    }
}

/// `hci.buffer-overflow`: Data Buffer Overflow (Core v5.4 Vol 4 Part E 7.7.26): the host sent more
/// packets than the controller had buffers for; the controller dropped them.
final class BufferOverflow: Detector {
    static let rule = RuleInfo(
        id: "hci.buffer-overflow", severity: .warning, title: "Controller data buffers overflowed",
        explanation: """
        The controller sent Data Buffer Overflow: the host sent more ACL (or SCO) packets than the controller's \
        buffers hold (Read Buffer Size, LE Read Buffer Size) and the controller dropped data. The host stack's flow \
        control is broken, or the controller announced more buffers than it has.
        """, actor: .hostStack,
        doc: .init(
            firesWhen: #"""
                Data Buffer Overflow (Vol 4 Part E 7.7.26): the host sent more packets than the controller's \#
                buffers hold; data was dropped
                """#,
            evidence: "the event"))
    let kinds: [SessionEvent.Kind] = [.controller]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .bufferOverflow(_, frame, time) = event else { return }
        findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: nil, time: time, frames: [frame],
                                message: "The controller's data buffers overflowed (Data Buffer Overflow): packets the host sent were dropped"))
    }
}

/// `hci.controller-restarted`: HCI Reset while links were open (they end without a Disconnection
/// Complete), or the controller's version changing mid-capture (its firmware was reloaded).
final class ControllerRestarted: Detector {
    static let rule = RuleInfo(
        id: "hci.controller-restarted", severity: .info, title: "Controller reset or reloaded",
        explanation: """
        The host reset the controller (HCI Reset, Core v5.4 Vol 4 Part E 7.3.2) while links were open, or the \
        controller reported another version than before (Read Local Version Information): its firmware was reloaded. \
        Every link ends; apps see their devices disconnect. After a Hardware Error or a command timeout it is the host's \
        recovery; otherwise Bluetooth was turned off and on.
        """, actor: .hostStack,
        doc: .init(
            firesWhen: #"""
                HCI Reset while links were open (they end without a Disconnection Complete, Vol 4 Part E \#
                7.3.2), or Read Local Version Information answering another version than before (a firmware \#
                reload)
                """#,
            evidence: "the Reset (or the version's Command Complete), the Connection Completes of the links"))
    let kinds: [SessionEvent.Kind] = [.controller]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .controllerRestarted(_, frame, time, closed, version) = event else { return }
        if let (old, new) = version {
            findings.append(Finding(rule: Self.rule.id, severity: .info, connection: nil, time: time, frames: [frame],
                                    message: "The controller's version changed mid-capture (manufacturer \(old.manufacturer) LMP subversion 0x\(Format.hex(old.lmpSubversion, 4)) → manufacturer \(new.manufacturer) 0x\(Format.hex(new.lmpSubversion, 4))): its firmware was reloaded"))
            return
        }
        let handles = closed.prefix(8).map { "0x\(Format.hex($0.handle, 4))" }.joined(separator: ", ")
        findings.append(Finding(rule: Self.rule.id, severity: .info, connection: closed.first, time: time, frames: [frame] + closed.prefix(8).compactMap { $0.lifecycle.completeFrame },
                                message: "HCI Reset with \(closed.count) link\(closed.count == 1 ? "" : "s") open (\(handles)): \(closed.count == 1 ? "it ends" : "they end") without a Disconnection Complete"))
    }
}
