import ArgumentParser
import BLEAnalysis
import BLEProtocol
import BLEReplay
import BLEReport

/// `bleanalyze peer FILE --hci URI`: be the recorded peer device on a controller of its own — a
/// device twin for CI (docs/REPLAY.md "Turn a field log into a CI test"). Exit 0: the live central
/// did everything the recording's central did; 1: divergences; 2: transport or input failure.
struct Peer: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Act as the recorded peer device (a twin) on a live controller: advertise, serve its GATT database, answer as it did.",
        discussion: """
            --hci hci:N, tcp:HOST:PORT (RootCanal, Bumble tcp-server) or tty:PATH[,BAUD]. Prints "advertising as ADDR" \
            once it advertises (on stderr with --json). Ends when the central disconnects or at --timeout. \
            Exit 0: the central did what the recording's central did; 1: divergences (requests the recording cannot \
            answer, recorded requests not done again); 2: transport or input failure.
            """)

    @Argument(help: "The recording: a capture taken on the central's side (phone, btmon, PacketLogger).") var file: String
    @Option(name: .long, help: "The twin's own controller: hci:N, tcp:HOST:PORT or tty:PATH[,BAUD].") var hci: String
    @Option(name: .long, help: ArgumentHelp("The device to play, when the capture talks to several: its address or its name (default: the peer with the most ATT traffic).", valueName: "NAME|ADDR")) var device: String?
    @Option(name: .long, help: "Seconds before giving up (the connection never came or never ended).") var timeout: Double = 300
    @Option(name: .long, help: "The passkey (0–999999) of a Passkey Entry pairing with the central (default: the one the recording shows, if it does).") var passkey: UInt32?
    @OptionGroup var play: PlayOptions

    func validate() throws {
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
        try PeerRun.validate(passkey: passkey)
    }

    func run() throws {
        let twin = try PeerRun.load(file, device: device)
        var options = play.options()
        options.passkey = passkey
        let transport: HCITransport
        do { transport = try Transports.open(try TransportURI(hci), timeout: 5) } catch {
            ReplayOutput.fail(error, file: file, peer: hci, run: play)
        }
        defer { transport.close() }
        let capture = play.write.map { _ in LiveCapture(weAreHost: true) }
        let engine = PeerEngine(twin: twin, transport: transport, options: options, limit: timeout, capture: capture)
        let json = play.json
        engine.announce = { line in
            if json { Diagnostics.message(line); return }
            var out = Output()
            out.line(line)
            out.flush()
        }
        var outcome = engine.run()
        outcome.recording = file
        transport.close()
        ReplayOutput.finish(outcome, capture: capture, run: play, verb: "served")
    }
}

/// Loading a twin for `peer` and `replay --peer`.
enum PeerRun {
    /// A passkey is six decimal digits (Core v5.4 Vol 3 Part H 2.3.5.3).
    static func validate(passkey: UInt32?) throws {
        if let passkey, passkey > 999_999 { throw ValidationError("--passkey takes 0 to 999999, not \(passkey)") }
    }

    /// The twin of `file` (device chosen by `device` — an address, or a peer name matched as
    /// `--peer` matches it — or by ATT traffic), or exit 2 with the reason.
    static func load(_ file: String, device: String?) throws -> TwinRecording {
        let address = device.flatMap(BDAddr.init(string:))
        let named: (name: String, matches: (Connection) -> Bool)? = device.flatMap { d in
            guard address == nil else { return nil }
            let scope = PeerScope(d)
            return (name: d, matches: { (c: Connection) in scope.matches(c) })
        }
        do {
            let twin = try TwinRecording.load(path: file, device: address, named: named)
            for note in twin.notes { Diagnostics.message("peer: \(note)") }
            return twin
        } catch {
            Diagnostics.warn(error.description)
            throw ExitCode(ExitCodes.badInput)
        }
    }
}
