import ArgumentParser
import BLEReplay
import BLEReport

/// `bleanalyze emulate FILE --listen URI`: be the recorded controller for a host stack, and report
/// where the host's packets differ from the recording (docs/REPLAY.md). Exit codes as `replay`.
struct Emulate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Act as the recorded controller for a host that connects over TCP or a pty; report where the host diverges.",
        discussion: """
            --listen tcp:HOST:PORT (port 0 picks a free one) or pty[:LINK] (the slave path is printed; LINK becomes a \
            symlink to it). The first line printed is "listening on URI" (on stderr with --json). Ends when the \
            recording is exhausted or the host disconnects. Exit 0: the host did what the recording did; 1: divergences; \
            2: transport or input failure.
            """)

    @Argument(help: "The recording: any capture bleanalyze reads.") var file: String
    @Option(name: .long, help: "Where the host connects: tcp:HOST:PORT or pty[:LINK].") var listen: String
    @Option(name: .long, help: "Seconds to wait for the host to connect and send its first packet.") var acceptTimeout: Double = 30
    @OptionGroup var session: ReplayRunOptions

    func validate() throws {
        try session.validate()
        guard acceptTimeout > 0 else { throw ValidationError("--accept-timeout must be positive") }
    }

    func run() throws {
        let options = try session.options()
        let script = try session.script(file)
        let listener: HCIListener
        do { listener = try Transports.listen(try TransportURI(listen)) } catch {
            ReplayOutput.fail(error, file: file, peer: listen, run: session.play)
        }
        defer { listener.close() }
        announce("listening on \(listener.address)")
        let start = Clock.now()
        let transport: HCITransport
        do { transport = try listener.accept(timeout: acceptTimeout) } catch {
            ReplayOutput.fail(error, file: file, peer: listener.address, run: session.play)
        }
        defer { transport.close() }
        let capture = session.play.write.map { _ in LiveCapture(weAreHost: false) }
        let remaining = max(0.1, acceptTimeout - (Clock.now() - start))
        var outcome = EmulateEngine(script: script, transport: transport, options: options, capture: capture)
            .run(firstPacketTimeout: remaining)
        outcome.recording = file
        outcome.strictEnvironment = !options.rules.isRelaxed(ReplayRules.environment)
        transport.close()
        ReplayOutput.finish(outcome, capture: capture, run: session.play, verb: "emulated")
    }

    /// The address line, flushed at once so a test or a script can connect the host.
    private func announce(_ line: String) {
        if session.play.json { Diagnostics.message(line); return }
        var out = Output()
        out.line(line)
        out.flush()
    }
}
