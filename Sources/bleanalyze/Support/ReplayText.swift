import BLEBytes
import BLEProtocol
import BLEReplay
import BLEReport

/// Where replay's text goes, a line at a time (the CLI's standard output).
protocol LineOutput {
    mutating func line(_ s: String)
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

/// Text, JSON and JUnit output of a replay or emulate outcome.
enum ReplayOutput {
    static func text<Out: LineOutput>(_ o: ReplayOutcome, verb: String, width: Int, into out: inout Out) {
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
    static func environment<Out: LineOutput>(_ o: ReplayOutcome, into out: inout Out) {
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
    static func sideBySide<Out: LineOutput>(_ d: Divergence, width: Int, into out: inout Out) {
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
    public init(format1 value: Double) {
        let tenths = Int((value * 10).rounded())
        self = "\(tenths / 10).\(abs(tenths % 10))"
    }
}
