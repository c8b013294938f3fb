import ArgumentParser
import BLEAnalysis
import BLEBytes
import BLECapture
import BLEReplay
import BLEReport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `bleanalyze live`: a session watched as it happens — a stream on stdin, a growing file, a proxy
/// between a host stack and its controller, or the Linux HCI monitor channel — with connections told
/// as they open and close, the findings and the report when it ends, and `check`'s exit status.
struct Live: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Watch a session as it happens (stdin, a growing file, a proxy, the HCI monitor); exit 1 on findings as check does.",
        discussion: """
            One source: - (a capture on standard input: btsnoop, pcap, pcapng or PacketLogger), --follow FILE (a \
            capture still being written: btmon -w, a phone's snoop log), --proxy LISTEN --to CONTROLLER (H4 between a \
            host stack and its controller: tcp:HOST:PORT, pty[:LINK], tty:PATH[,BAUD] or serial:PATH@BAUD; every \
            packet passed on unchanged), --monitor (Linux: every adapter, as btmon), or --uart LINE (a firmware's BlueZ \
            monitor protocol on a serial line: Zephyr, NimBLE; as btmon -d; its drop counters told). The session ends when the source \
            does (end of input, the proxy's host or controller gone), at --duration, or on SIGINT/SIGTERM; then the \
            findings are printed (each with its why and frames) and the report, which equals `bleanalyze report` on the \
            --write file. Each finding is printed the moment it is decided — most at their link's end, once nothing \
            later can change it; those about the whole capture, or that the end decides, when the session ends — never \
            one printed and withdrawn (with --peer or --baseline, all at the end). --jsonl prints one JSON object per event \
            (docs/live-schema.json) and, last, the report document (as report --json). \
            Exit 0: nothing at or above --fail-on; 1: findings; 2: the source could not be read.
            """)

    @Argument(help: ArgumentHelp("- to read a capture from standard input.", valueName: "-")) var input: String?
    @Option(name: .long, help: ArgumentHelp("Follow a capture file as it grows (like tail -f).", valueName: "FILE")) var follow: String?
    @Option(name: .long, help: ArgumentHelp("Wait for the host stack here (tcp:HOST:PORT, pty[:LINK]) and pass its packets to --to.", valueName: "LISTEN"))
    var proxy: String?
    @Option(name: .long, help: ArgumentHelp("The controller the proxy connects to (tcp:HOST:PORT, tty:PATH[,BAUD], serial:PATH@BAUD).", valueName: "CONTROLLER"))
    var to: String?
    @Flag(name: .long, help: "Read the Linux HCI monitor channel (every adapter, as btmon; needs CAP_NET_RAW).") var monitor = false
    @Option(name: .long, help: ArgumentHelp("Read the BlueZ monitor protocol a firmware writes on a UART (Zephyr, NimBLE; as btmon -d): serial:PATH@BAUD, tty:PATH[,BAUD], a pty's PATH, or - (standard input).", valueName: "LINE"))
    var uart: String?
    @Option(name: [.short, .long], help: ArgumentHelp("Save everything seen to FILE (the source's own bytes; btsnoop for the proxy and the monitor).", valueName: "FILE"))
    var write: String?
    @Flag(name: .long, help: "One JSON object per event, one per line (docs/live-schema.json); last, the report document.") var jsonl = false
    @Option(name: .long, help: "Fail on findings at or above this severity: error, warning or info.") var failOn: String = "error"
    @Option(name: .long, help: ArgumentHelp("Only findings about this device: its name or address (and those about the capture as a whole).", valueName: "NAME|ADDR"))
    var peer: String?
    @Option(name: .long, help: ArgumentHelp("Accepted findings (rule, peer, attribute), as check --baseline: only findings not listed fail.", valueName: "FILE"))
    var baseline: String?
    @Option(name: .long, help: ArgumentHelp("End the session after this many seconds.", valueName: "SECONDS")) var duration: Double?
    @OptionGroup var ruleOptions: RuleOptions

    enum Source { case standardInput, follow(String), proxy(TransportURI, TransportURI), monitor, uart(path: String, baud: Int?) }

    func validate() throws {
        let count = [input != nil, follow != nil, proxy != nil, monitor, uart != nil].filter { $0 }.count
        guard count == 1 else { throw ValidationError("live takes one source: -, --follow FILE, --proxy LISTEN --to CONTROLLER, --monitor or --uart LINE") }
        if let uart { _ = try Self.line(uart) }
        if let input, input != "-" { throw ValidationError("live reads - (standard input); for a file use --follow \(input)") }
        guard (proxy == nil) == (to == nil) else { throw ValidationError("--proxy LISTEN and --to CONTROLLER go together") }
        guard Severity(rawValue: failOn) != nil else { throw ValidationError("--fail-on takes error, warning or info, not \(failOn)") }
        if let peer, peer.isEmpty { throw ValidationError("--peer takes a name or an address") }
        if let duration, !(duration > 0) { throw ValidationError("--duration takes a number of seconds above 0") }
    }

    /// `serial:PATH@BAUD` is `tty:PATH,BAUD`; the rest as replay reads it.
    static func transport(_ text: String) throws(ValidationError) -> TransportURI {
        var text = text
        if text.hasPrefix("serial:") {
            let rest = text.dropFirst("serial:".count)
            if let at = rest.lastIndex(of: "@") { text = "tty:" + rest[..<at] + "," + rest[rest.index(after: at)...] } else { text = "tty:" + rest }
        }
        do { return try TransportURI(text) } catch { throw ValidationError(error.description) }
    }

    /// `--uart`: `serial:PATH@BAUD`, `tty:PATH[,BAUD]`, a path, or `-`.
    static func line(_ text: String) throws(ValidationError) -> (path: String, baud: Int?) {
        if text == "-" { return ("-", nil) }
        if text.hasPrefix("serial:") || text.hasPrefix("tty:") {
            guard case let .tty(path, baud, _) = try transport(text) else { throw ValidationError("--uart takes serial:PATH@BAUD, tty:PATH[,BAUD], a path or -") }
            let given = text.contains("@") || text.dropFirst(4).contains(",")
            return (path, given ? baud : nil)
        }
        guard !text.isEmpty, !text.contains(":") else { throw ValidationError("--uart takes serial:PATH@BAUD, tty:PATH[,BAUD], a path or -, not \(text)") }
        return (text, nil)
    }

    func run() throws {
        let level = Severity(rawValue: failOn) ?? .error
        let configuration = try ruleOptions.configuration()
        let scope = peer.map(PeerScope.init)
        let baseline = try baseline.map { path throws(ValidationError) in try Baseline(path: path) }
        let source: Source
        if let follow { source = .follow(follow) } else if let proxy, let to {
            source = .proxy(try Self.transport(proxy), try Self.transport(to))
        } else if monitor { source = .monitor } else if let uart {
            let line = try Self.line(uart)
            source = .uart(path: line.path, baud: line.baud)
        } else { source = .standardInput }
        let name: String
        switch source {
        case .standardInput: name = write ?? StandardInput.name
        case let .follow(path): name = write ?? path
        case let .proxy(_, to): name = write ?? "proxy to \(to)"
        case .monitor: name = write ?? "HCI monitor"
        case let .uart(path, _): name = write ?? "monitor on \(path == "-" ? StandardInput.name : path)"
        }
        let events = LiveEvents(jsonl: jsonl)
        let session: LiveSession
        do {
            session = try LiveSession(name: name, configuration: configuration, write: write, events: events,
                                      early: scope == nil && baseline == nil)
        } catch {
            Diagnostics.warn(error.description)
            throw ExitCode(ExitCodes.badInput)
        }
        switch source {
        case .proxy, .monitor: session.wallClockTimes = true
        default: break
        }
        LiveStop.install()
        let deadline = duration.map { session.started + $0 }
        var sourceError: String?
        do throws(CaptureError) {
            switch source {
            case .standardInput: try LiveSources.standardInput(session, until: deadline)
            case let .follow(path): try LiveSources.follow(path, session, until: deadline)
            case let .proxy(listen, to): sourceError = try LiveProxy.run(listen: listen, to: to, session, until: deadline)
            case .monitor: sourceError = try LiveSources.monitor(session, until: deadline)
            case let .uart(path, baud): try LiveSources.uart(path, baud: baud, session, until: deadline)
            }
        } catch {
            var error = error
            if error.path == session.stream.name, write == nil { error.path = name }
            events.clearStatus()
            Diagnostics.warn(error.description)
            throw ExitCode(ExitCodes.badInput)
        }
        if let sourceError, session.stream.received == 0 {
            events.clearStatus()
            Diagnostics.warn(sourceError)
            throw ExitCode(ExitCodes.badInput)
        }
        let summary: ReadSummary, findings: [Finding]
        do { (summary, findings) = try session.end() } catch {
            events.clearStatus()
            Diagnostics.warn(error.description)
            throw ExitCode(ExitCodes.badInput)
        }
        events.clearStatus()
        let info = session.info
        let model = session.analyzer.session
        let judged = Check.judge(findings, analyzer: session.analyzer, info: info, frames: summary.frames,
                                 scope: scope, baseline: baseline, level: level)
        for f in judged.findings where !session.toldEarly.contains(FindingKey(f)) { events.finding(f, decided: .sessionEnd) }
        let facts = CaptureFacts(path: name, info: info, summary: summary, analyzer: session.analyzer)
        var out = Output()
        if jsonl {
            ReportJSON.write(facts, model: model, findings: judged.findings) { out.write($0) }
            out.write("\n")
        } else {
            out.write("\n" + ReportText.render(facts, model: model, findings: judged.findings, style: TerminalStyle.detect(), all: false))
            let over = judged.failing.count
            out.line(over == 0 ? "PASS  \(name): \(Check.counts(judged.findings))"
                : "FAIL  \(name): \(over) finding\(over == 1 ? "" : "s") at or above \(level.rawValue)"
                    + (judged.accepted.isEmpty ? "" : " (\(judged.accepted.count) accepted by the baseline)"))
        }
        out.flush()
        for issue in summary.issues { Diagnostics.warn("\(name): \(issue)") }
        if let write { Diagnostics.message("live: \(summary.frames) frames saved to \(write)") }
        _ = Unmanaged.passRetained(session)
        if judged.peerMissing || judged.notRead != nil {
            Diagnostics.warn(judged.notRead ?? "\(peer ?? "") was not seen in this session: nothing was checked")
            throw ExitCode(ExitCodes.badInput)
        }
        if !judged.failing.isEmpty { throw ExitCode(ExitCodes.findings) }
    }
}

/// The byte sources of `live`: standard input, a growing file, the monitor channel.
enum LiveSources {
    /// Until standard input ends (or the deadline, or a signal).
    static func standardInput(_ session: LiveSession, until deadline: Double?) throws(CaptureError) {
        if isatty(STDIN_FILENO) != 0 {
            throw CaptureError(path: StandardInput.name, reason: "a terminal, not a capture: pipe one in (btmon -w /dev/stdout | bleanalyze live -)")
        }
        session.events.started(source: "-")
        while !LiveStop.stop, !past(deadline) {
            guard wait(STDIN_FILENO) else { session.status(); continue }
            let n = try session.read(from: STDIN_FILENO)
            if n == 0 { return }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw CaptureError(path: StandardInput.name, offset: session.stream.received, reason: "cannot read: \(String(cString: strerror(errno)))")
            }
            session.status()
        }
    }

    /// Follows `path` as it grows until the deadline or a signal (then reads what is there). A file
    /// that shrinks (truncated) or is replaced (rotated) ends the session, told with counts.
    static func follow(_ path: String, _ session: LiveSession, until deadline: Double?) throws(CaptureError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CaptureError(path: path, reason: "cannot open: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        session.events.started(source: "follow:" + path)
        var ended = false
        while true {
            let n = try session.read(from: fd)
            if n > 0 { session.status(); continue }
            if n < 0 {
                if errno == EINTR { continue }
                throw CaptureError(path: path, offset: session.stream.received, reason: "cannot read: \(String(cString: strerror(errno)))")
            }
            // At the end of what is written: stop now if asked (everything written has been read).
            if ended { return }
            if let problem = replaced(path, fd, read: session.stream.received) {
                session.events.sourceProblem(problem.kind, "\(path): \(problem.text); \(session.stream.summary.frames) frames and \(session.stream.received) bytes were read: the session ends there",
                                             counts: [("frames", session.stream.summary.frames), ("bytes", session.stream.received)])
                return
            }
            if LiveStop.stop || past(deadline) { ended = true; continue }
            session.status()
            pause()
        }
    }

    /// The followed file shrank under us or another file took its name.
    private static func replaced(_ path: String, _ fd: Int32, read: Int) -> (kind: String, text: String)? {
        var open = stat(), named = stat()
        guard fstat(fd, &open) == 0 else { return nil }
        if Int(open.st_size) < read {
            return ("truncated", "the file was truncated to \(open.st_size) bytes by its writer")
        }
        if stat(path, &named) == 0, named.st_ino != open.st_ino || named.st_dev != open.st_dev {
            return ("rotated", "the file was replaced (rotated) by its writer")
        }
        return nil
    }

    /// The monitor channel until the deadline or a signal. Returns why it stopped early, if it did.
    static func monitor(_ session: LiveSession, until deadline: Double?) throws(CaptureError) -> String? {
        let channel: MonitorChannel
        do { channel = try MonitorChannel() } catch { throw CaptureError(path: "HCI monitor", reason: error.message) }
        session.events.started(source: "monitor")
        try session.take(BTSnoopWriter(datalink: Datalink.btsnoopMonitor).bytes)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 17, alignment: 8)
        defer { buffer.deallocate() }
        while !LiveStop.stop, !past(deadline) {
            let n: Int
            do { n = try channel.receive(into: buffer, timeout: LiveStop.tick) } catch { return error.description }
            guard n > 0 else { session.status(); continue }
            let record = ByteReader(UnsafeRawBufferPointer(rebasing: buffer[0 ..< n]))
            guard let opcode = record.getU16le(at: 0), let index = record.getU16le(at: 2) else { continue }
            var w = ByteWriter()
            BTSnoopWriter.record(flags: UInt32(index) << 16 | UInt32(opcode), timestamp: Clock.wallMicros(),
                                 UnsafeRawBufferPointer(rebasing: buffer[MonitorChannel.headerSize ..< n]), into: &w)
            try session.take(w.bytes)
            session.status()
        }
        return nil
    }

    /// The BlueZ monitor protocol a firmware writes on a UART (`MonitorUARTDeframer`), until the line
    /// ends (a pty's writer gone, end of standard input), the deadline or a signal. Each packet becomes
    /// a btsnoop monitor record (index 0; the device's clock, 1/10 ms since it started, set on the
    /// wall clock at the first packet); packets the device dropped, and bytes that were no packet,
    /// are told with counts as they show.
    static func uart(_ path: String, baud: Int?, _ session: LiveSession, until deadline: Double?) throws(CaptureError) {
        let fd: Int32
        if path == "-" { fd = STDIN_FILENO } else {
            do { fd = try SerialLine.open(path: path, baud: baud) } catch { throw CaptureError(path: path, reason: error.description) }
        }
        defer { if fd != STDIN_FILENO { close(fd) } }
        session.events.started(source: "uart:" + path)
        try session.take(BTSnoopWriter(datalink: Datalink.btsnoopMonitor).bytes)
        var line = MonitorUARTClock()
        var deframer = MonitorUARTDeframer()
        var dropped = MonitorUARTDeframer.Drops()
        var skippedTold = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 8)
        defer { buffer.deallocate() }
        reading: while !LiveStop.stop, !past(deadline) {
            guard wait(fd) else { session.status(); continue }
            let n = read(fd, buffer.baseAddress, buffer.count)
            if n == 0 { break }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                if errno == EIO { break reading }   // a pty whose writer closed it
                throw CaptureError(path: path, offset: session.stream.received, reason: "cannot read: \(String(cString: strerror(errno)))")
            }
            deframer.receive(UnsafeRawBufferPointer(rebasing: buffer[0 ..< n]))
            var w = ByteWriter()
            while let p = deframer.next() {
                if !p.drops.isEmpty {
                    dropped += p.drops
                    let kinds = p.drops.counts.map { "\($0.1) \($0.0)" }.joined(separator: ", ")
                    session.events.sourceProblem("dropped", "\(path): the device dropped \(p.drops.total) packet\(p.drops.total == 1 ? "" : "s") (\(kinds)) before its packet \(deframer.packets); \(dropped.total) so far",
                                                 counts: Self.dropCounts(p.drops) + [("totalDrops", dropped.total)])
                }
                BTSnoopWriter.record(flags: UInt32(p.opcode), timestamp: line.time(p.timestamp), drops: UInt32(clamping: dropped.total),
                                     p.payload, into: &w)
            }
            if deframer.skipped > skippedTold {
                session.events.sourceProblem("garbage", "\(path): \(deframer.skipped - skippedTold) bytes were no monitor packet (a wrong baud rate, or a line shared with a console?) and were skipped",
                                             counts: [("bytes", deframer.skipped - skippedTold)])
                skippedTold = deframer.skipped
            }
            if !w.bytes.isEmpty { try session.take(w.bytes) }
            session.status()
        }
        if deframer.pending > 0 {
            session.events.sourceProblem("truncated", "\(path): the line ended inside a packet (\(deframer.pending) bytes of it read)", counts: [("bytes", deframer.pending)])
        }
        if !dropped.isEmpty {
            session.events.sourceProblem("dropped-total", "\(path): the device dropped \(dropped.total) packets in all (\(dropped.counts.map { "\($0.1) \($0.0)" }.joined(separator: ", "))): the session lacks them",
                                         counts: Self.dropCounts(dropped) + [("totalDrops", dropped.total)])
        }
    }

    /// The drop counts as `source` event keys (`commandDrops`, `eventDrops`, …).
    private static func dropCounts(_ d: MonitorUARTDeframer.Drops) -> [(String, Int)] { d.counts.map { ($0.0 + "Drops", $0.1) } }

    static func past(_ deadline: Double?) -> Bool { deadline.map { LiveClock.now() >= $0 } ?? false }

    /// Waits up to a tick for `fd` to be readable.
    static func wait(_ fd: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, Int32(LiveStop.tick * 1000)) > 0
    }

    private static func pause() { _ = poll(nil, 0, Int32(LiveStop.tick * 1000)) }
}

/// The time of a firmware's monitor packets: its 32-bit clock in 1/10 ms since it started (wraps
/// after 119 hours), set on the wall clock at the first packet; the wall clock for packets without one.
struct MonitorUARTClock {
    private var origin: Int64?
    private var last: UInt32 = 0
    private var wraps: Int64 = 0

    mutating func time(_ ticks: UInt32?) -> Int64 {
        guard let ticks else { return Clock.wallMicros() }
        if ticks < last { wraps += 1 }
        last = ticks
        let micros = (wraps << 32 + Int64(ticks)) * 100
        let origin = origin ?? Clock.wallMicros() - micros
        self.origin = origin
        return origin + micros
    }
}
