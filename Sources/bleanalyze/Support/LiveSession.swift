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

/// The analysis of a live session (`bleanalyze live`): the bytes of a capture as a file would hold
/// them (a stream as it comes, or btsnoop records made of what a proxy or the monitor channel
/// passes) go through `CaptureStream` into the one pass (`Analyzer.consume`), are saved as they are
/// (`--write`), and what happens is told as events (`LiveEvents`): each finding the moment it is
/// decided (`DecidedFindings`: at its link's end for most). When the session ends, `end()` finishes
/// the pass: the findings and report are those of `report` on the saved bytes.
final class LiveSession {
    let stream: CaptureStream
    let analyzer: Analyzer
    let events: LiveEvents
    /// Findings as they are decided; nil when they are told only at the end (--peer and --baseline
    /// judge a finding by its peer's name, known only when the pass ends).
    private let decisions: DecidedFindings?
    /// The frames' times are the wall clock's when they came (the proxy, the monitor channel): a
    /// link's findings are decided a second after its end even when nothing comes after it.
    var wallClockTimes = false
    /// The findings told before the end (rule, connection, key frame), not told again then.
    private(set) var toldEarly = Set<FindingKey>()
    /// How many were told before the end; `toldEarly` forgets those the report will not list (info
    /// findings of summarised connections past the cap, counted) once it doubles (`forgetCounted`).
    private var toldCount = 0
    private var forgetAt = 1024
    /// `--write`: every byte the stream received, in order.
    private var saved: Int32 = -1
    let savedPath: String?
    /// Connections told as opened (their indexes up to this), and those of them still open (indexes).
    private var announced = 0
    private var openIndexes: [Int] = []
    /// Status: frames at the last status, and when it was.
    private var lastStatus = (frames: 0, time: 0.0)
    let started = LiveClock.now()

    init(name: String, configuration: RuleConfiguration, write: String?, events: LiveEvents, early: Bool = true) throws(CaptureError) {
        stream = CaptureStream(name: name)
        analyzer = Analyzer(detect: true, configuration: configuration)
        decisions = early ? DecidedFindings(analyzer) : nil
        self.events = events
        savedPath = write
        if let write {
            saved = open(write, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard saved >= 0 else { throw CaptureError(path: write, reason: "cannot write: \(String(cString: strerror(errno)))") }
        }
        // A connection about to be summarised is told first, while the model still holds it.
        analyzer.retirement?.willSummarise.append { [unowned self] _ in self.tellConnections() }
    }

    deinit { if saved >= 0 { close(saved) } }

    /// Reads once from `fd` into the stream (and the saved copy) and analyses every whole record.
    /// - Returns: the bytes read (0: end of the source; negative: `read`'s error, in `errno`).
    func read(from fd: Int32) throws(CaptureError) -> Int {
        let saved = saved
        let n = stream.receive { space in
            let n = readBytes(fd, space)
            if n > 0, saved >= 0 { writeAll(saved, UnsafeBufferPointer(start: space.baseAddress?.assumingMemoryBound(to: UInt8.self), count: n)) }
            return n
        }
        if n > 0 { try drain() }
        return n
    }

    /// Takes bytes made here (btsnoop header and records of a proxy or the monitor channel).
    func take(_ bytes: [UInt8]) throws(CaptureError) {
        bytes.withUnsafeBytes { stream.receive(copying: $0) }
        if saved >= 0 { bytes.withUnsafeBufferPointer { writeAll(saved, $0) } }
        try drain()
    }

    /// Analyses every whole record received; connections and decided findings are told every
    /// `tellEvery` frames and every second of capture time too, so a large read (a file piped in at
    /// once) tells them where they happen: a link's window or a request's timer that runs out is told
    /// before what the frames after it do (the link's close).
    private func drain() throws(CaptureError) {
        let analyzer = analyzer
        var n = 0
        try stream.drain { frame in
            analyzer.consume(frame)
            n &+= 1
            if n & (Self.tellEvery - 1) == 0 || frame.timestamp >= nextTell {
                tellConnections()
                tellDecided()
                nextTell = frame.timestamp &+ Self.tellSpan
            }
        }
        tellConnections()
        tellDecided()
    }
    private static let tellEvery = 256
    private static let tellSpan: Int64 = 1_000_000
    /// Capture time (µs) at which `drain` tells again.
    private var nextTell: Int64 = .min

    /// Findings decided since the last call, as events.
    private func tellDecided() {
        guard let decisions else { return }
        let model = analyzer.session
        for f in decisions.poll(clock: wallClockTimes ? Clock.wallMicros() : nil) {
            toldEarly.insert(FindingKey(f))
            toldCount += 1
            let open = f.connectionIndex.flatMap { model.connection($0)?.isOpen } ?? false
            events.finding(f, decided: open ? .timer : .linkEnd)
        }
        forgetCounted()
    }

    /// Keeps `toldEarly` to the findings the report can still list: of a summarised connection only
    /// those sealed (`DetectorEngine.sealed`, bounded); the rest were counted.
    private func forgetCounted() {
        guard toldEarly.count >= forgetAt, let engine = analyzer.engine else { return }
        let model = analyzer.session
        let sealed = Set(engine.sealed.map(FindingKey.init))
        toldEarly = toldEarly.filter { k in
            guard let n = k.connection, model.connection(n) == nil, model.summary(n) != nil else { return true }
            return sealed.contains(k)
        }
        forgetAt = max(1024, 2 * toldEarly.count)
    }

    /// Connections that opened or closed since the last call, as events.
    private func tellConnections() {
        let model = analyzer.session
        guard announced < model.connectionCount || !openIndexes.isEmpty else { return }
        var still: [Int] = []
        for i in openIndexes {
            // Summarised only once closed, and told before (`willSummarise`).
            guard let c = model.connection(i) else { continue }
            if c.isOpen { still.append(i) } else { events.connectionClosed(c) }
        }
        for c in model.connections.reversed().prefix(while: { $0.index > announced }).reversed() {
            events.connectionOpened(c)
            if c.isOpen { still.append(c.index) } else { events.connectionClosed(c) }
        }
        announced = max(announced, model.connections.last?.index ?? 0)
        openIndexes = still
    }

    /// A status event when a second has passed since the last.
    func status(force: Bool = false) {
        if wallClockTimes { tellDecided() }
        let now = LiveClock.now()
        guard force || now - lastStatus.time >= 1 else { return }
        let frames = stream.summary.frames
        let rate = lastStatus.time == 0 ? 0 : Double(frames - lastStatus.frames) / max(now - lastStatus.time, 0.001)
        events.status(frames: frames, perSecond: rate, open: openIndexes.count, findingsSoFar: analyzer.engine?.made ?? 0,
                      told: toldCount, seconds: now - started)
        lastStatus = (frames, now)
    }

    /// Ends the pass: the summary of what was read and the final findings (after `Analyzer.finish`:
    /// causes linked, findings folded). Those not told as decided before are told by the caller.
    func end() throws(CaptureError) -> (ReadSummary, [Finding]) {
        let analyzer = analyzer
        let summary = try stream.finish { analyzer.consume($0) }
        tellConnections()
        tellDecided()
        if saved >= 0 { close(saved); saved = -1 }
        let findings = analyzer.finish()
        return (summary, findings)
    }

    var info: CaptureInfo {
        stream.info ?? CaptureInfo(format: .btsnoop, datalink: Datalink.btsnoopH4, fileSize: stream.received)
    }
}

/// A finding as told: its rule, connection and key frame (folding keeps them).
struct FindingKey: Hashable {
    var rule: String
    var connection: Int?
    var frame: Int?
    init(_ f: Finding) { (rule, connection, frame) = (f.rule, f.connectionIndex, f.frames.first) }
}

/// Wall-clock seconds (monotonic), for rates and `--duration`.
enum LiveClock {
    static func now() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
}

/// How `live` ends: SIGINT or SIGTERM set the flag; loops look at it between reads (every wait in
/// them is a `poll` of at most `LiveStop.tick` seconds).
enum LiveStop {
    nonisolated(unsafe) static var requested: sig_atomic_t = 0
    static let tick = 0.1

    static func install() {
        // A parent may have started us with them blocked (or ignored): they must reach us.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, SIGINT)
        sigaddset(&unblock, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        for sig in [SIGINT, SIGTERM] {
            var action = sigaction()
            #if os(Linux)
            action.__sigaction_handler.sa_handler = { _ in LiveStop.requested = 1 }
            #else
            action.__sigaction_u.__sa_handler = { _ in LiveStop.requested = 1 }
            #endif
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0   // no SA_RESTART: a blocked read returns EINTR
            sigaction(sig, &action, nil)
        }
    }

    static var stop: Bool { requested != 0 }
}

/// The C `read`, out of the way of `LiveSession.read(from:)`.
private func readBytes(_ fd: Int32, _ space: UnsafeMutableRawBufferPointer) -> Int { read(fd, space.baseAddress, space.count) }
