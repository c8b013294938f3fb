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
    @Option(name: .long, help: ArgumentHelp("With --peer: the device the twin plays, its address or name (default: the peer with the most ATT traffic).", valueName: "NAME|ADDR")) var device: String?
    @Option(name: .long, help: "With --peer: the passkey (0–999999) of a Passkey Entry pairing the twin does with a central that is not replaying the recorded one (default: the recorded passkey, if the recording shows it).") var passkey: UInt32?

    func validate() throws {
        try session.validate()
        var probe = ReplayOptions()
        for m in mapAddress where !probe.mapAddress(m) {
            throw ValidationError("--map-address takes OLD=NEW with two addresses (C0:11:22:33:44:55=D0:11:22:33:44:66), not \(m)")
        }
        guard connectTimeout > 0 else { throw ValidationError("--connect-timeout must be positive") }
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

/// What a replay or emulate run prints and writes (the outcome's text, JSON and JUnit: `ReplayOutput` in BLEReport).
extension ReplayOutput {
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
        if run.json { out.line(json(outcome)) } else { text(outcome, verb: verb, width: Diagnostics.terminalWidth(), into: &out) }
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
}

extension Output: LineOutput {}
