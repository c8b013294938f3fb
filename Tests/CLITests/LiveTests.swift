import Foundation
import Testing
import TestSupport

/// `bleanalyze live` on a stream and on a growing file: the must-hold property is that the session's
/// final report (the last `--jsonl` line) is byte for byte `bleanalyze report FILE --json` on the
/// `--write` file, that the saved file is the bytes that came, and that the report is the one of the
/// original capture (only its name differs) — every capture of captures/ and the real corpus, fed
/// whole through stdin and written progressively under `--follow`.
@Suite struct LiveTests {
    /// The captures live reads as a stream: everything but gzip (live says to inflate it first).
    static func streamable() throws -> [String] {
        try CLI.allCaptures().filter { !$0.hasSuffix(".gz") }
    }

    static func scratch(_ name: String) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bleanalyze-live-\(getpid())-\(name)-\(UInt32.random(in: 0 ... .max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// The report document with the capture's name taken out (it names the file it was made from).
    static func unnamed(_ json: String) throws -> NSDictionary {
        var document = try CLI.json(json)
        var capture = try #require(document["capture"] as? [String: Any])
        capture["file"] = nil
        document["capture"] = capture
        return document as NSDictionary
    }

    /// A finding's why, its kind and frames (its text names the peer as known when it is told).
    static func why(_ f: NSDictionary) -> String {
        guard let c = f["cause"] as? [String: Any] else { return "-" }
        return "\(c["kind"] ?? "") \(c["frames"] as? [Int] ?? [])"
    }

    /// Checks one live session's output against `report` on its saved file and on the original.
    static func agree(_ original: String, saved: String, stdout: String, status: Int32, stderr: String, options: [String] = []) throws {
        let lines = stdout.split(separator: "\n").map(String.init)
        let last = try #require(lines.last, "\(original): no output; stderr: \(stderr)")
        let onSaved = try CLI.run([saved, "--json"] + options)
        #expect(last == onSaved.stdout.trimmingCharacters(in: .newlines), "\(original): live's report is not report's on the saved file")
        #expect(FileManager.default.contentsEqual(atPath: original, andPath: saved), "\(original): the saved file is not the bytes that came")
        let onOriginal = try CLI.run([original, "--json"] + options)
        #expect(try unnamed(last) == unnamed(onOriginal.stdout), "\(original): live's report differs from report on the capture")
        // Every finding is told once: those decided at their link's end as the report holds them (same
        // rule, connection, severity, why, key frame; frames among the report's), the rest at the end
        // as the report holds them, in its order; none told and left out, none left untold.
        let document = try CLI.json(last)
        let reported = (document["findings"] as? [[String: Any]] ?? []).map { $0 as NSDictionary }
        let events = try lines.dropLast().map { try CLI.json($0) }.filter { $0["type"] as? String == "finding" }
        func key(_ f: NSDictionary) -> String {
            "\(f["rule"] ?? "") \(f["connectionIndex"] ?? "-") \((f["frames"] as? [Int])?.first ?? 0)"
        }
        let byKey = Dictionary(reported.map { (key($0), $0) }, uniquingKeysWith: { a, _ in a })
        var toldKeys: [String] = []
        var atEnd: [NSDictionary] = []
        for event in events {
            let f = (event["finding"] as? [String: Any] ?? [:]) as NSDictionary
            toldKeys.append(key(f))
            guard event["decided"] as? String != "session-end" else { atEnd.append(f); continue }
            let r = try #require(byKey[key(f)], "\(original): \(key(f)) told at its link's end, not in the report")
            #expect(f["severity"] as? String == r["severity"] as? String && Self.why(f) == Self.why(r)
                && Set(f["frames"] as? [Int] ?? []).isSubset(of: Set(r["frames"] as? [Int] ?? [])), "\(original): \(f) became \(r)")
        }
        #expect(atEnd == reported.filter { !toldKeys.dropLast(atEnd.count).contains(key($0)) }, "\(original): the findings told at the end are not the report's")
        #expect(Set(toldKeys) == Set(reported.map(key)) && toldKeys.count == reported.count, "\(original): told \(toldKeys.count), reported \(reported.count)")
        // check's exit status at the default level (error).
        let errors = reported.filter { $0["severity"] as? String == "error" }.count
        #expect(status == (errors > 0 ? 1 : 0), "\(original): exit \(status) with \(errors) errors; stderr: \(stderr)")
    }

    @Test func standardInputEqualsReportOnEveryCapture() throws {
        let dir = try Self.scratch("stdin")
        defer { try? FileManager.default.removeItem(at: dir) }
        let captures = try Self.streamable()
        // The project's own captures, and the real corpus beside them where ../shared is.
        #expect(captures.count >= (CLI.sharedReal == nil ? 40 : 90))
        for (i, path) in captures.enumerated() {
            let saved = dir.appendingPathComponent("\(i)").path
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let r = try CLI.run(["live", "-", "--jsonl", "--write", saved], stdin: .pipe(data))
            try Self.agree(path, saved: saved, stdout: r.stdout, status: r.status, stderr: r.stderr)
        }
    }

    /// Issue 32, memory flat: a long session summarises its oldest finished connections, in `live`
    /// as in `report`, at the same frames. With every connection summarised as soon as it may be
    /// (`--keep-connections 0`) live still ends with report's document and tells every finding once:
    /// on a long session made here and on every capture where that summarises connections.
    @Test func summarisingLiveEqualsReport() throws {
        let dir = try Self.scratch("summarised")
        defer { try? FileManager.default.removeItem(at: dir) }
        let long = dir.appendingPathComponent("long-session.btsnoop")
        try Data(CaptureBuilder.longSession(connections: 60)).write(to: long)
        var checked = 0
        for (i, path) in try ([long.path] + Self.streamable()).enumerated() {
            let report = try CLI.run([path, "--json", "--keep-connections", "0"])
            guard let summary = (try? CLI.json(report.stdout))?["summarised"] as? [String: Any], (summary["connections"] as? Int ?? 0) > 0 else { continue }
            let saved = dir.appendingPathComponent("\(i)").path
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let r = try CLI.run(["live", "-", "--jsonl", "--keep-connections", "0", "--write", saved], stdin: .pipe(data))
            try Self.agree(path, saved: saved, stdout: r.stdout, status: r.status, stderr: r.stderr, options: ["--keep-connections", "0"])
            // Every connection is told opened and closed, summarised or not.
            let events = try r.stdout.split(separator: "\n").dropLast().map { try CLI.json(String($0)) }
            let opened = events.filter { $0["type"] as? String == "connection-opened" }.count
            let document = try CLI.json(String(r.stdout.split(separator: "\n").last ?? ""))
            #expect(opened == (document["summary"] as? [String: Any])?["connections"] as? Int, "\(path): \(opened) told opened")
            checked += 1
        }
        #expect(checked >= (CLI.sharedReal == nil ? 1 : 10), "\(checked) captures summarise connections")
    }

    /// The test writes each capture in pieces of random sizes, with pauses, while `live --follow`
    /// reads it; SIGTERM ends the session once everything is written (live reads to the end first).
    @Test func followEqualsReportOnEveryCapture() throws {
        let dir = try Self.scratch("follow")
        defer { try? FileManager.default.removeItem(at: dir) }
        var generator = SystemRandomNumberGenerator()
        for (i, path) in try Self.streamable().enumerated() {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let growing = dir.appendingPathComponent("\(i).growing").path
            let saved = dir.appendingPathComponent("\(i).saved").path
            FileManager.default.createFile(atPath: growing, contents: nil)
            let live = try Session(["live", "--follow", growing, "--jsonl", "--write", saved])
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: growing))
            var offset = 0
            let pieces = Int.random(in: 2 ... 6, using: &generator)
            while offset < data.count {
                let n = min(data.count - offset, max(1, data.count / pieces + Int.random(in: -7 ... 7, using: &generator)))
                try handle.write(contentsOf: data[offset ..< offset + n])
                offset += n
                usleep(UInt32.random(in: 1_000 ... 30_000, using: &generator))
            }
            try handle.close()
            let r = try live.end(signal: SIGTERM)
            try Self.agree(path, saved: saved, stdout: r.stdout, status: r.status, stderr: r.stderr)
        }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: SchemaTests.python.path), ".venv absent (make venv): no jsonschema"))
    func theSchemaDescribesEveryLine() throws {
        let python = SchemaTests.python
        let dir = try Self.scratch("schema")
        defer { try? FileManager.default.removeItem(at: dir) }
        var documents: [String] = []
        var types: Set<String> = []
        for name in ["unsubscribed_notification.btsnoop", "healthy.pcapng", "pairing_failed.btsnoop"] {
            let data = try Data(contentsOf: URL(fileURLWithPath: CLI.capture(name)))
            let r = try CLI.run(["live", "-", "--jsonl"], stdin: .pipe(data))
            for (i, line) in r.stdout.split(separator: "\n").enumerated() {
                let file = dir.appendingPathComponent("\(name)-\(i).json")
                try Data(line.utf8).write(to: file)
                documents.append("live=" + file.path)
                types.insert(try CLI.json(String(line))["type"] as? String ?? "report")
            }
        }
        #expect(types.isSuperset(of: ["started", "connection-opened", "connection-closed", "finding", "report"]), "\(types)")
        let (status, text) = try Tool.outcome(python, ["-c", SchemaTests.validator, CLI.repoRoot.appendingPathComponent("docs").path] + documents)
        #expect(status == 0 && text.contains("validated \(documents.count) documents, 0 errors"), "\(text)")
    }

    /// An ATT request unanswered for 30 s on a link that stays open is told when its timer (and the
    /// window in which the link's end would be blamed on it) has run out, before the link closes,
    /// as the report holds it. cccd_unanswered.btsnoop (Bumble, RootCanal) as tshark reads it: the
    /// Write Request to the CCCD 0x0011 at frame 47 gets no response; frames 48–51 are Number Of
    /// Completed Packets, the host's Disconnect 31.0 s after it, its Command Status and Disconnection
    /// Complete. Built from it: those last three records 60 s later, so the link stays open 91 s.
    @Test func anATTTimeoutOnAnOpenLinkIsToldAtItsTime() throws {
        var data = try Data(contentsOf: URL(fileURLWithPath: CLI.capture("cccd_unanswered.btsnoop")))
        var offset = 16, record = 0
        while offset + 24 <= data.count {
            record += 1
            let length = data[offset + 4 ..< offset + 8].reduce(0) { $0 << 8 | Int($1) }
            if record >= 49 {
                var t = data[offset + 16 ..< offset + 24].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } + 60_000_000
                for i in (0 ..< 8).reversed() { data[offset + 16 + i] = UInt8(truncatingIfNeeded: t); t >>= 8 }
            }
            offset += 24 + length
        }
        #expect(record == 51 && offset == data.count)
        let dir = try Self.scratch("timer")
        defer { try? FileManager.default.removeItem(at: dir) }
        let built = dir.appendingPathComponent("open_att_timeout.btsnoop").path
        let saved = dir.appendingPathComponent("saved").path
        try data.write(to: URL(fileURLWithPath: built))
        let r = try CLI.run(["live", "-", "--jsonl", "--write", saved], stdin: .pipe(data))
        try Self.agree(built, saved: saved, stdout: r.stdout, status: r.status, stderr: r.stderr)
        let events = try r.stdout.split(separator: "\n").dropLast().map { try CLI.json(String($0)) }
        let told = try #require(events.firstIndex {
            ($0["finding"] as? [String: Any])?["rule"] as? String == "att.timeout"
        }, "att.timeout not told: \(r.stdout)")
        let closed = try #require(events.firstIndex { $0["type"] as? String == "connection-closed" })
        #expect(told < closed, "att.timeout told after the link closed")
        #expect(events[told]["decided"] as? String == "timer")
        let f = try #require(events[told]["finding"] as? [String: Any])
        #expect(f["frames"] as? [Int] == [47])
        let report = try CLI.json(try #require(r.stdout.split(separator: "\n").last.map(String.init)))
        let reported = try #require((report["findings"] as? [[String: Any]])?.first { $0["rule"] as? String == "att.timeout" })
        // The report's adds only what folds into it at the end (the subscription left unanswered).
        for key in ["rule", "severity", "connectionIndex", "frames", "cause", "actor", "time", "handle"] {
            #expect((f[key] as? NSObject) == (reported[key] as? NSObject), "\(key): told \(f[key] ?? "-"), reported \(reported[key] ?? "-")")
        }
    }

    @Test func failOnBaselineAndPeerWorkAsInCheck() throws {
        let capture = CLI.capture("unsubscribed_notification.btsnoop")   // one warning: gatt.unsubscribed-notification
        let data = try Data(contentsOf: URL(fileURLWithPath: capture))
        let plain = try CLI.run(["live", "-"], stdin: .pipe(data))
        #expect(plain.status == 0, "\(plain.stderr)")
        let failing = try CLI.run(["live", "-", "--fail-on", "warning"], stdin: .pipe(data))
        #expect(failing.status == 1)
        #expect(failing.stdout.contains("WARNING gatt.unsubscribed-notification frames #47"), "\(failing.stdout)")
        #expect(failing.stdout.contains("FAIL"))
        let dir = try Self.scratch("baseline")
        defer { try? FileManager.default.removeItem(at: dir) }
        let baseline = dir.appendingPathComponent("baseline.txt").path
        let written = try CLI.run(["check", capture, "--fail-on", "warning", "--write-baseline", baseline])
        #expect(written.status == 0, "\(written.stderr)")
        let accepted = try CLI.run(["live", "-", "--fail-on", "warning", "--baseline", baseline], stdin: .pipe(data))
        #expect(accepted.status == 0, "\(accepted.stdout)")
        let elsewhere = try CLI.run(["live", "-", "--fail-on", "warning", "--peer", "11:22:33:44:55:66"], stdin: .pipe(data))
        #expect(elsewhere.status == 2, "a device never seen is an error, not a pass: \(elsewhere.stderr)")
    }

    @Test func badStreamsAreClearErrors() throws {
        let gz = try Data(contentsOf: URL(fileURLWithPath: CLI.capture("healthy.btsnoop.gz")))
        let r = try CLI.run(["live", "-"], stdin: .pipe(gz))
        #expect(r.status == 2)
        #expect(r.stderr.contains("gzip-compressed: inflate it first"), "\(r.stderr)")
        let text = try CLI.run(["live", "-"], stdin: .pipe(Data(repeating: 0x41, count: 100_000)))
        #expect(text.status == 2)
        #expect(text.stderr.contains("not a capture"), "\(text.stderr)")
        // A record cut off by the end of the stream is reported as report reports it.
        let whole = try Data(contentsOf: URL(fileURLWithPath: CLI.capture("healthy.btsnoop")))
        let cut = whole.prefix(whole.count - 5)
        let dir = try Self.scratch("cut")
        defer { try? FileManager.default.removeItem(at: dir) }
        let saved = dir.appendingPathComponent("cut.btsnoop").path
        let live = try CLI.run(["live", "-", "--jsonl", "--write", saved], stdin: .pipe(cut))
        #expect(live.stderr.contains("file ends inside the record"), "\(live.stderr)")
        let onSaved = try CLI.run([saved, "--json"])
        #expect(live.stdout.split(separator: "\n").last.map(String.init) == onSaved.stdout.trimmingCharacters(in: .newlines))
    }

    /// A followed file its writer truncates: the session ends there, saying so with counts.
    @Test func aTruncatedFollowedFileIsToldWithCounts() throws {
        let dir = try Self.scratch("truncate")
        defer { try? FileManager.default.removeItem(at: dir) }
        let growing = dir.appendingPathComponent("log").path
        let data = try Data(contentsOf: URL(fileURLWithPath: CLI.capture("healthy.btsnoop")))
        try data.write(to: URL(fileURLWithPath: growing))
        let live = try Session(["live", "--follow", growing, "--jsonl"])
        usleep(400_000)
        truncate(growing, 16)
        let r = try live.wait(timeout: 10)
        let events = try r.stdout.split(separator: "\n").map { try CLI.json(String($0)) }
        let told = try #require(events.first { $0["type"] as? String == "source" }, "\(r.stdout)")
        #expect(told["event"] as? String == "truncated")
        #expect(told["bytes"] as? Int == data.count)
        let report = try #require(events.last)
        #expect((report["capture"] as? [String: Any])?["frames"] as? Int == told["frames"] as? Int)
    }

    /// This machine may have no kernel Bluetooth: then the error says what is missing and how to get it.
    #if os(Linux)
    @Test func theMonitorChannelSaysWhatIsMissing() throws {
        let r = try CLI.run(["live", "--monitor", "--duration", "0.5"])
        if r.status == 2 {
            let says = r.stderr.contains("no Bluetooth sockets") && r.stderr.contains("modprobe bluetooth")
                || r.stderr.contains("CAP_NET_RAW") && r.stderr.contains("setcap")
            #expect(says, "\(r.stderr)")
        } else {
            // A kernel with Bluetooth and the privilege: a session of half a second, its report last.
            #expect(r.status == 0 || r.status == 1)
            #expect(r.stdout.contains("HCI monitor"))
        }
    }
    #endif

    /// A `bleanalyze` process left running while the test writes, ended by a signal.
    final class Session {
        let process = Process()
        let out = Pipe()
        let errURL: URL
        private let box = Box()
        private let reader: Thread

        final class Box: @unchecked Sendable {   // safe: every access holds the lock
            let lock = NSLock()
            var data = Data()
            var done = false
        }

        /// Starts `bleanalyze ARGUMENTS` and waits for its first line (`live --jsonl`: `started`,
        /// written once its signal handlers are in place and its source is open).
        init(_ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: CLI.binary)
            process.arguments = arguments
            errURL = FileManager.default.temporaryDirectory.appendingPathComponent("bleanalyze-live-err-\(getpid())-\(UInt32.random(in: 0 ... .max))")
            FileManager.default.createFile(atPath: errURL.path, contents: nil)
            process.standardOutput = out
            process.standardError = try FileHandle(forWritingTo: errURL)
            try process.run()
            let handle = out.fileHandleForReading
            let box = box
            reader = Thread {
                while true {
                    let chunk = handle.availableData
                    box.lock.lock()
                    if chunk.isEmpty { box.done = true; box.lock.unlock(); return }
                    box.data.append(chunk)
                    box.lock.unlock()
                }
            }
            reader.start()
            let deadline = Date().addingTimeInterval(20)
            while true {
                box.lock.lock()
                let ready = box.data.contains(UInt8(ascii: "\n")) || box.done
                box.lock.unlock()
                if ready { break }
                if Date() > deadline { process.terminate(); throw LiveFailure("live printed nothing within 20 s") }
                usleep(2_000)
            }
        }

        /// The output so far.
        var stdout: String {
            box.lock.lock()
            defer { box.lock.unlock() }
            return String(decoding: box.data, as: UTF8.self)
        }

        func end(signal: Int32) throws -> CLI.Result {
            kill(process.processIdentifier, signal)
            return try wait(timeout: 30)
        }

        func wait(timeout: Double) throws -> CLI.Result {
            let deadline = Date().addingTimeInterval(timeout)
            while true {
                box.lock.lock()
                let done = box.done
                box.lock.unlock()
                if done && !process.isRunning { break }
                if Date() > deadline { process.terminate(); throw LiveFailure("live did not end within \(timeout) s") }
                usleep(5_000)
            }
            let err = (try? Data(contentsOf: errURL)) ?? Data()
            try? FileManager.default.removeItem(at: errURL)
            return CLI.Result(status: process.terminationStatus, stdout: stdout, stderr: String(decoding: err, as: UTF8.self))
        }
    }

    struct LiveFailure: Error, CustomStringConvertible {
        let description: String
        init(_ text: String) { description = text }
    }
}
