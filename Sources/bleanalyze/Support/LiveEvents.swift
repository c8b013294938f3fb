import BLEAnalysis
import BLEReport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `live` tells while it runs: text lines for a person (stdout), or with `--jsonl` one JSON
/// object per line (schema: docs/live-schema.json), each written the moment it happens. The
/// one-line status goes to stderr, and only when stderr is a terminal (text) — or every second as a
/// `status` event (JSONL).
final class LiveEvents {
    let jsonl: Bool
    private let statusLine: Bool
    private var statusShown = false

    init(jsonl: Bool) {
        self.jsonl = jsonl
        statusLine = !jsonl && isatty(STDERR_FILENO) != 0
    }

    private func emit(_ text: String) {
        clearStatus()
        var line = text + "\n"
        line.withUTF8 { writeAll(STDOUT_FILENO, $0) }
    }

    private func object(_ type: String, _ body: (inout JSONWriter) -> Void) {
        var w = JSONWriter()
        w.beginObject()
        w.string("type", type)
        body(&w)
        w.endObject()
        emit(w.output)
    }

    private static func connectionFields(_ c: Connection, _ w: inout JSONWriter) {
        w.int("connection", c.index)
        w.int("handle", Int(c.handle))
        w.int("adapter", Int(c.adapter))
        if let peer = c.peerAddress { w.string("peer", peer.description) }
        w.string("peerLabel", c.peerLabel)
    }

    /// The source is open and signals end the session from now on (`listening`: where the proxy waits for the host).
    func started(source: String, listening: String? = nil) {
        if jsonl {
            object("started") { w in
                w.string("source", source)
                if let listening { w.string("listening", listening) }
            }
        }
    }

    func connectionOpened(_ c: Connection) {
        let frame = c.lifecycle.completeFrame ?? c.lifecycle.attemptFrame
        let time = c.lifecycle.completeTime ?? c.lifecycle.attemptTime
        if jsonl {
            object("connection-opened") { w in
                Self.connectionFields(c, &w)
                w.optional("frame", frame)
                w.optional("time", time)
            }
        } else {
            emit("connection #\(c.index) opened: handle 0x\(String(c.handle, radix: 16, uppercase: true)) to \(c.peerLabel)"
                 + (frame.map { " (frame #\($0))" } ?? ""))
        }
    }

    func connectionClosed(_ c: Connection) {
        let reason = c.lifecycle.disconnectReason
        if jsonl {
            object("connection-closed") { w in
                Self.connectionFields(c, &w)
                w.optional("frame", c.lifecycle.disconnectFrame)
                w.optional("time", c.lifecycle.disconnectTime)
                if let reason { w.int("reason", Int(reason.rawValue)) }
            }
        } else {
            emit("connection #\(c.index) closed" + (reason.map { ": \($0.name) (0x\(String($0.rawValue, radix: 16, uppercase: true)))" } ?? "")
                 + (c.lifecycle.disconnectFrame.map { " (frame #\($0))" } ?? ""))
        }
    }

    /// When a finding was decided (`DecidedFindings`): its link's end, its timer on a link still
    /// open (`att.timeout`), or the session's end.
    enum Decided: String { case linkEnd = "link-end", timer, sessionEnd = "session-end" }

    /// A decided finding, told when it was `decided`.
    func finding(_ f: Finding, decided: Decided) {
        if jsonl {
            var w = JSONWriter()
            ReportJSON.finding(f, &w)
            emit("{\"type\":\"finding\",\"decided\":\"\(decided.rawValue)\",\"finding\":\(w.output)}")
        } else {
            var text = "\(f.severity.rawValue.uppercased()) \(f.rule) frames \(f.frames.map { "#\($0)" }.joined(separator: ",")): \(f.text)"
            if let why = f.causeText { text += "\n      why: \(why)" }
            emit(text)
        }
    }

    /// Something about the source itself: dropped packets, a followed file truncated, a proxy side gone.
    func sourceProblem(_ kind: String, _ message: String, counts: [(String, Int)] = []) {
        if jsonl {
            object("source") { w in
                w.string("event", kind)
                w.string("message", message)
                for (k, v) in counts { w.int(JSONKey(k), v) }
            }
        } else {
            clearStatus()
            Diagnostics.warn(message)
        }
    }

    /// `findingsSoFar`: what the detectors hold, decided or not; `told`: the decided ones already printed.
    func status(frames: Int, perSecond: Double, open: Int, findingsSoFar: Int, told: Int, seconds: Double) {
        if jsonl {
            object("status") { w in
                w.int("frames", frames)
                w.int("framesPerSecond", Int(perSecond.rounded()))
                w.int("openConnections", open)
                w.int("findingsSoFar", findingsSoFar)
                w.int("findingsTold", told)
                w.int("elapsedMillis", Int(seconds * 1000))
            }
        } else if statusLine {
            var line = "\r\u{1B}[K live: \(frames) frames, \(Int(perSecond.rounded())) frames/s, \(open) connections open, \(findingsSoFar) findings so far (\(told) decided and told)"
            line.withUTF8 { writeAll(STDERR_FILENO, $0) }
            statusShown = true
        }
    }

    func clearStatus() {
        guard statusShown else { return }
        var line = "\r\u{1B}[K"
        line.withUTF8 { writeAll(STDERR_FILENO, $0) }
        statusShown = false
    }
}
