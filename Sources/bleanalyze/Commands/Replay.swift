import ArgumentParser
import BLEBytes
import BLECapture
import BLEProtocol
import BLEReplay
import BLEReport

/// `bleanalyze replay FILE --hci URI`: plays the host side of a recording to a live controller and
/// reports where the controller's answers differ (docs/REPLAY.md). Exit 0: no divergence;
/// 1: divergences (including expected packets that never came); 2: transport or input failure.
struct Replay: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replay a recorded session against a live controller and report divergences.",
        discussion: """
            URIs: hci:N (Linux HCI user channel), tcp:HOST:PORT (H4 over TCP: Bumble tcp-server, RootCanal), \
            tty:PATH[,BAUD][,rtscts] (H4 over a serial port or pty). Rules (--ignore/--strict): \
            \(ReplayRules.all.map { "\($0.id)\($0.relaxedByDefault ? "" : " (off by default)")" }.joined(separator: ", ")); see docs/REPLAY.md. \
            Exit 0: no divergence; 1: divergences; 2: transport or input failure.
            """)

    @Argument(help: "The recording: any capture bleanalyze reads (btsnoop, pcap, pcapng, PacketLogger).") var file: String
    @Option(name: .long, help: "The controller: hci:N, tcp:HOST:PORT or tty:PATH[,BAUD].") var hci: String
    @OptionGroup var session: ReplayRunOptions
    @Option(name: .long, help: "Recorded peer address → live one, OLD=NEW (repeatable).") var mapAddress: [String] = []
    @Option(name: .long, help: "Seconds to wait for the TCP connection.") var connectTimeout: Double = 5
    @Option(name: .long, help: "Also play the recorded peer device (a twin, as `peer`) on this controller: hci:N, tcp:HOST:PORT, tty:PATH.") var peer: String?
    @Option(name: .long, help: "With --peer: the device the twin plays (default: the peer with the most ATT traffic).") var device: String?
    @Option(name: .long, help: "With --peer: the passkey (0–999999) of a Passkey Entry pairing the twin does with a central that is not replaying the recorded one (default: the recorded passkey, if the recording shows it).") var passkey: UInt32?

    func validate() throws {
        try session.validate()
        var probe = ReplayOptions()
        for m in mapAddress where !probe.mapAddress(m) {
            throw ValidationError("--map-address takes OLD=NEW with two addresses (C0:11:22:33:44:55=D0:11:22:33:44:66), not \(m)")
        }
        guard connectTimeout > 0 else { throw ValidationError("--connect-timeout must be positive") }
        if let device, BDAddr(string: device) == nil { throw ValidationError("--device takes an address (C0:11:22:33:44:55), not \(device)") }
        if device != nil && peer == nil { throw ValidationError("--device goes with --peer") }
        if passkey != nil && peer == nil { throw ValidationError("--passkey goes with --peer") }
        try PeerRun.validate(passkey: passkey)
    }

    func run() throws {
        var options = try session.options()
        for m in mapAddress { _ = options.mapAddress(m) }
        let script = try session.script(file)
        let uri: TransportURI
        let transport: HCITransport
        do {
            uri = try TransportURI(hci)
            transport = try Transports.open(uri, timeout: connectTimeout)
        } catch {
            ReplayOutput.fail(error, file: file, peer: hci, run: session.play)
        }
        defer { transport.close() }
        let twin = try peer.map { try startTwin($0, options: options) }
        if let twin, let live = twin.address, let recorded = twin.recorded, live != recorded { options.addressMap[recorded] = live }
        // The type the twin lives at, written before its address in the commands sent: a random
        // static address for a recorded public one, and its plain type where the recording named
        // the device by its identity (Peer Address Type 0x02/0x03: the twin uses no resolvable
        // private address, and its controller's resolving list does not hold the recorded IRK).
        if let twin, let recorded = twin.recorded, let type = twin.thread.addressType {
            options.addressTypes[recorded] = type.rawValue
        }
        if let twin, twin.openBeforeLog, let recorded = twin.recorded { options.twinOpenBeforeLog = (twin.handle, recorded) }
        if let twin, let recorded = twin.recorded {
            options.advertisers = [recorded]
            Diagnostics.message("replay: advertising reports of devices other than \(recorded) are not compared (they are not on the twin's radio)")
        }
        let capture = session.play.write.map { _ in LiveCapture(weAreHost: true) }
        let engine = ReplayEngine(script: script, transport: transport, options: options, capture: capture)
        if let twin { engine.beforeConnecting = { twin.thread.allowConnection($0) } }
        var outcome = engine.run()
        outcome.recording = file
        if let twin { outcome.notes += twin.thread.finish(grace: 3).map(TwinNotes.lines) ?? ["twin: did not end"] }
        ReplayOutput.finish(outcome, capture: capture, run: session.play, verb: "replayed")
    }
}

extension Replay {
    /// Starts the twin of the recording on `uri` and waits until it advertises (exit 2 if it cannot).
    func startTwin(_ uri: String, options: ReplayOptions) throws -> (thread: TwinThread, address: BDAddr?, recorded: BDAddr?, recordedType: LEAddressType,
                                                                    handle: UInt16, openBeforeLog: Bool) {
        let twin = try PeerRun.load(file, device: device)
        let transport: HCITransport
        do { transport = try Transports.open(try TransportURI(uri), timeout: connectTimeout) } catch {
            ReplayOutput.fail(error, file: file, peer: uri, run: session.play)
        }
        var twinOptions = options
        twinOptions.timeout = max(options.timeout, 5)
        twinOptions.passkey = passkey
        let thread = TwinThread(PeerEngine(twin: twin, transport: transport, options: twinOptions, limit: 3600))
        thread.start()
        guard let line = thread.waitAdvertising(timeout: 30) else {
            let message = thread.finish(grace: 0)?.error?.message ?? "the twin did not start advertising"
            ReplayOutput.fail(TransportError(.open, "--peer \(uri): \(message)"), file: file, peer: uri, run: session.play)
        }
        Diagnostics.message("twin on \(uri): \(line)")
        return (thread, thread.address, twin.device, twin.deviceType, twin.handle, twin.openBeforeLog)
    }
}

/// The twin's result as notes of the replay.
enum TwinNotes {
    static func lines(_ o: ReplayOutcome) -> [String] {
        var lines = ["twin: served \(o.replayed)/\(o.total) recorded central PDUs, \(o.divergences.count) divergence\(o.divergences.count == 1 ? "" : "s")"
                     + (o.error.map { "; stopped: \($0.message)" } ?? "")]
        lines += o.notes.map { "twin: " + $0 }
        lines += o.divergences.map { "twin: \($0.kind.rawValue): \($0.message)" }
        return lines
    }
}

/// Options of every command that plays a recording live (`replay`, `emulate`, `peer`): the pace
/// and what is written.
struct PlayOptions: ParsableArguments {
    @Option(name: .long, help: "fast (as fast as flow control allows) or original (recorded gaps).") var timing: String = "fast"
    @Option(name: .long, help: "With --timing original: play this many times faster.") var speed: Double = 1
    @Flag(name: .long, help: "Print the result as one JSON document.") var json = false
    @Option(name: .long, help: "Write a JUnit XML report (one test case per recorded step).") var junit: String?
    @Option(name: [.customShort("w"), .long], help: "Write what was sent and received live as btsnoop.") var write: String?

    func validate() throws {
        guard speed > 0 else { throw ValidationError("--speed must be positive") }
        guard ReplayOptions.Timing(rawValue: timing) != nil else { throw ValidationError("--timing takes fast or original, not \(timing)") }
    }

    /// Replay options with this pace.
    func options() -> ReplayOptions {
        var o = ReplayOptions()
        o.timing = ReplayOptions.Timing(rawValue: timing) ?? .fast
        o.speed = speed
        return o
    }
}

/// Options shared by `replay` and `emulate`.
struct ReplayRunOptions: ParsableArguments {
    @Option(name: .long, help: "Seconds to wait for each expected packet.") var timeout: Double = 5
    @OptionGroup var play: PlayOptions
    @Option(name: .long, help: "Relax a comparison rule (repeatable; 'all').") var ignore: [String] = []
    @Option(name: .long, help: "Compare strictly what a rule relaxes by default (repeatable; 'all').") var strict: [String] = []

    func validate() throws {
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
        do { _ = try RuleSet(ignore: ignore, strict: strict) } catch { throw ValidationError(error.description) }
    }

    func options() throws -> ReplayOptions {
        var o = play.options()
        o.timeout = timeout
        do { o.rules = try RuleSet(ignore: ignore, strict: strict) } catch { throw ValidationError(error.description) }
        return o
    }

    /// Loads the recording or exits 2 with the reason.
    func script(_ file: String) throws -> Script {
        let script: Script
        do { script = Script(try Recording.load(path: file)) } catch {
            Diagnostics.warn(error.description)
            throw ExitCode(ExitCodes.badInput)
        }
        // A capture without HCI packets (an air capture: Ubertooth, nRF Sniffer) has nothing to
        // replay: an input error, not a vacuous pass.
        guard !script.units.isEmpty else {
            Diagnostics.warn("\(file): no HCI packets to replay (an air capture has none: replay needs a host-side capture)")
            throw ExitCode(ExitCodes.badInput)
        }
        return script
    }
}

/// Text, JSON and JUnit output of a replay or emulate outcome.
enum ReplayOutput {
    /// Reports a failure before the run started (bad URI, nothing listening) and exits 2.
    static func fail(_ error: Error, file: String, peer: String, run: PlayOptions) -> Never {
        let message = (error as? TransportError)?.message ?? "\(error)"
        Diagnostics.warn(message)
        let outcome = ReplayOutcome(recording: file, peer: peer, steps: [], divergences: [], replayed: 0, total: 0, notCompared: 0,
                                    error: (error as? TransportError) ?? TransportError(.open, message), notes: [], seconds: 0)
        if run.json { var out = Output(); out.line(json(outcome)); out.flush() }
        if let junit = run.junit { try? JUnitReplay.document(outcome).write(to: junit) }
        terminate(ExitCodes.badInput)
    }

    /// Prints the outcome, writes the files asked for, and exits with the outcome's code.
    static func finish(_ outcome: ReplayOutcome, capture: LiveCapture?, run: PlayOptions, verb: String) {
        var out = Output()
        if run.json { out.line(json(outcome)) } else { text(outcome, verb: verb, into: &out) }
        out.flush()
        if let error = outcome.error { Diagnostics.warn(error.message) }
        if let path = run.write, let capture {
            do { try capture.write(to: path) } catch { Diagnostics.warn(error.message) }
        }
        if let junit = run.junit {
            do { try JUnitReplay.document(outcome).write(to: junit) } catch { Diagnostics.warn("cannot write \(junit)") }
        }
        if outcome.exitCode != 0 { terminate(outcome.exitCode) }
    }

    static func text(_ o: ReplayOutcome, verb: String, into out: inout Output) {
        let width = Diagnostics.terminalWidth()
        for note in o.notes { out.line("= \(note)") }
        let listed = o.strictEnvironment ? o.divergences : o.behaviourDivergences
        for d in listed {
            let at = d.frame.map { "at frame #\($0)" } ?? "live packet"
            out.line("DIVERGENCE \(d.kind.rawValue) \(at) (step \(d.step)): \(d.message)")
            for diff in d.differences {
                out.line("    \(diff.field): expected \(diff.expected), got \(diff.actual)" + (diff.rule.map { " [rule \($0)]" } ?? ""))
            }
            if d.expected != nil || d.actual != nil { sideBySide(d, width: width, into: &out) }
        }
        if !o.strictEnvironment { environment(o, into: &out) }
        for c in o.connections {
            out.line("connection #\(c.index) (recorded handle 0x\(String(c.recordedHandle, radix: 16)), #\(c.frame)\(c.peer.map { ", " + $0 } ?? "")\(c.openBeforeLog ? ", open before the log starts" : "")): "
                     + (c.replayed ? "up" : "did not come up") + ", \(c.stepsReplayed)/\(c.steps) replayed"
                     + (c.skipped > 0 ? ", \(c.skipped) skipped" : "") + ", \(c.behaviourDivergences) behaviour divergence\(c.behaviourDivergences == 1 ? "" : "s"), \(String(format1: c.seconds)) s")
        }
        let n = o.divergences.count
        var details = ["\(String(format1: o.seconds)) s against \(o.peer)"]
        if o.notCompared > 0 { details.insert("\(o.notCompared) packets not compared under the rules", at: 0) }
        if let error = o.error { details.append("stopped: \(error.message)") }
        let b = o.behaviourDivergences.count
        let classes = n == 0 ? "" : " (\(b) behaviour, \(n - b) environment)"
        out.line("\(verb) \(o.replayed)/\(o.total), \(n) divergence\(n == 1 ? "" : "s")\(classes) (\(details.joined(separator: "; ")))")
    }

    /// Environment divergences, listed once: one line per kind and packet title, with the count.
    static func environment(_ o: ReplayOutcome, into out: inout Output) {
        let env = o.environmentDivergences
        guard !env.isEmpty else { return }
        out.line("ENVIRONMENT \(env.count) divergence\(env.count == 1 ? "" : "s") of this controller's own traffic (listed once; they fail the run only with --strict environment):")
        for (line, count) in environmentGroups(env) { out.line("    \(count)× \(line)") }
    }

    /// (kind + packet title, count), in order of first appearance.
    static func environmentGroups(_ env: [Divergence]) -> [(String, Int)] {
        var order: [String] = [], counts: [String: Int] = [:]
        for d in env {
            let title = (d.expected ?? d.actual)?.title ?? d.message
            let key = "\(d.kind.rawValue): \(title)"
            if counts[key] == nil { order.append(key) }
            counts[key, default: 0] += 1
        }
        return order.map { ($0, counts[$0] ?? 0) }
    }

    /// The recorded and the live packet decoded, in two columns.
    static func sideBySide(_ d: Divergence, width: Int, into out: inout Output) {
        let left = lines(d.expected, heading: d.frame.map { "recorded #\($0)" } ?? "recorded")
        let right = lines(d.actual, heading: "live")
        let column = max(30, (width - 7) / 2)
        for i in 0..<max(left.count, right.count) {
            let l = i < left.count ? left[i] : ""
            let r = i < right.count ? right[i] : ""
            let clipped = l.count > column ? String(l.prefix(column - 1)) + "…" : l
            out.line("    " + clipped + String(repeating: " ", count: max(0, column - clipped.count)) + " | " + r)
        }
    }

    static func lines(_ unit: LinkUnit?, heading: String) -> [String] {
        guard let unit else { return [heading, "(nothing)"] }
        var text = ""
        let fields = FieldText(options: RenderOptions())
        for (depth, layer) in unit.layers.enumerated() {
            let pad = String(repeating: " ", count: depth * 2)
            text += pad + "\(layer.protocolName): \(layer.name)" + (layer.code.isEmpty ? "" : " (\(layer.code))") + "\n"
            fields.render(layer.fields, indent: depth * 2 + 2, into: &text)
            if let e = layer.error { text += pad + "  * malformed: \(e)\n" }
        }
        return [heading] + text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    static func json(_ o: ReplayOutcome) -> String {
        var w = JSONWriter()
        w.beginObject()
        w.string("recording", o.recording)
        w.string("peer", o.peer)
        w.bool("passed", o.exitCode == 0)
        w.int("exitCode", o.exitCode)
        w.int("replayed", o.replayed)
        w.int("total", o.total)
        w.int("notCompared", o.notCompared)
        w.int("divergenceCount", o.divergences.count)
        w.int("behaviourDivergenceCount", o.behaviourDivergences.count)
        w.int("environmentDivergenceCount", o.environmentDivergences.count)
        w.double("seconds", (o.seconds * 1000).rounded() / 1000)
        w.optional("error", o.error?.message)
        w.beginArray("notes"); for n in o.notes { w.string(nil, n) }; w.endArray()
        w.beginArray("divergences")
        for d in o.divergences {
            w.beginObject()
            w.string("kind", d.kind.rawValue)
            w.string("class", d.divergenceClass.rawValue)
            w.optional("connection", d.connection)
            w.optional("frame", d.frame)
            w.int("step", d.step)
            w.string("direction", d.fromHost ? "host-to-controller" : "controller-to-host")
            w.string("message", d.message)
            w.beginArray("differences")
            for diff in d.differences {
                w.beginObject()
                w.string("field", diff.field); w.string("expected", diff.expected); w.string("actual", diff.actual)
                w.optional("rule", diff.rule)
                w.endObject()
            }
            w.endArray()
            unitJSON("expected", d.expected, &w)
            unitJSON("actual", d.actual, &w)
            w.endObject()
        }
        w.endArray()
        w.beginArray("connections")
        for c in o.connections {
            w.beginObject()
            w.int("index", c.index)
            w.int("recordedHandle", Int(c.recordedHandle))
            w.optional("liveHandle", c.liveHandle.map(Int.init))
            w.int("frame", c.frame)
            w.optional("peer", c.peer)
            w.bool("replayed", c.replayed)
            w.int("steps", c.steps)
            w.int("stepsReplayed", c.stepsReplayed)
            w.int("skipped", c.skipped)
            w.int("divergences", c.divergences)
            w.int("behaviourDivergences", c.behaviourDivergences)
            w.double("seconds", (c.seconds * 1000).rounded() / 1000)
            w.bool("openBeforeLog", c.openBeforeLog)
            w.endObject()
        }
        w.endArray()
        w.beginArray("environment")
        for (line, count) in environmentGroups(o.environmentDivergences) {
            w.beginObject(); w.string("divergence", line); w.int("count", count); w.endObject()
        }
        w.endArray()
        w.endObject()
        return w.output
    }

    static func unitJSON(_ key: JSONKey, _ unit: LinkUnit?, _ w: inout JSONWriter) {
        guard let unit else { w.null(key); return }
        w.beginObject(key)
        w.string("summary", unit.title)
        w.beginArray("frames"); for f in unit.frames { w.int(nil, f) }; w.endArray()
        w.beginArray("packets"); for p in unit.packets { w.string(nil, Hex.string(p.wire, separator: "")) }; w.endArray()
        w.endObject()
    }
}

/// JUnit XML for a replay: one test suite for the recording, one test case per step (the start,
/// then each recorded host packet); divergences fail the step they belong to, a transport failure
/// is an error on the step where it happened.
enum JUnitReplay {
    static func document(_ o: ReplayOutcome) -> String {
        let steps = o.steps.isEmpty ? [ReplayStep(index: 0, frame: nil, title: "connect")] : o.steps
        let failing = o.divergences.filter { o.strictEnvironment || $0.divergenceClass == .behaviour }
        let failed = Set(failing.map(\.step))
        let errorIndex = o.error == nil ? nil : min(o.lastStep, steps.count - 1)
        var s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        s += "<testsuites name=\"bleanalyze replay\" tests=\"\(steps.count)\" failures=\"\(failed.count)\" errors=\"\(o.error == nil ? 0 : 1)\">\n"
        s += "  <testsuite name=\"\(JUnit.escape(o.recording)) against \(JUnit.escape(o.peer))\" tests=\"\(steps.count)\""
        s += " failures=\"\(failed.count)\" errors=\"\(o.error == nil ? 0 : 1)\" time=\"\(String(format1: o.seconds))\">\n"
        for step in steps {
            let name = "step \(step.index)" + (step.frame.map { " #\($0)" } ?? "") + ": " + step.title
            let all = o.divergences.filter { $0.step == step.index }
            let divergences = all.filter { o.strictEnvironment || $0.divergenceClass == .behaviour }
            let environment = all.filter { !o.strictEnvironment && $0.divergenceClass == .environment }
            s += "    <testcase classname=\"bleanalyze.replay\" name=\"\(JUnit.escape(name))\""
            if all.isEmpty && errorIndex != step.index { s += "/>\n"; continue }
            s += ">\n"
            if errorIndex == step.index, let e = o.error { s += "      <error message=\"\(JUnit.escape(e.message))\"/>\n" }
            if let first = divergences.first {
                s += "      <failure type=\"\(first.divergenceClass.rawValue) \(first.kind.rawValue)\" message=\"\(first.divergenceClass.rawValue): \(JUnit.escape(first.message))\">"
                s += JUnit.escape(divergences.map(describe).joined(separator: "\n"))
                s += "</failure>\n"
            }
            if !environment.isEmpty {
                s += "      <system-out>" + JUnit.escape(environment.map(describe).joined(separator: "\n")) + "</system-out>\n"
            }
            s += "    </testcase>\n"
        }
        return s + "  </testsuite>\n</testsuites>\n"
    }
}

extension JUnitReplay {
    static func describe(_ d: Divergence) -> String {
        let at: String = d.frame.map { "at frame #\($0)" } ?? "live packet"
        var text = "\(d.divergenceClass.rawValue) \(d.kind.rawValue) \(at): \(d.message)"
        for diff in d.differences { text += "\n  \(diff.field): expected \(diff.expected), got \(diff.actual)" }
        return text
    }
}

extension String {
    /// `1.2`: one decimal, without Foundation.
    init(format1 value: Double) {
        let tenths = Int((value * 10).rounded())
        self = "\(tenths / 10).\(abs(tenths % 10))"
    }
}
