import ArgumentParser
import BLEAnalysis
import BLEReport

/// `bleanalyze rules`: every rule with its id, severity, thresholds and explanation.
struct RulesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rules", abstract: "List every detector rule with its thresholds and advice.")
    @Flag(name: .long, help: "JSON instead of text.") var json = false
    @Flag(name: .long, help: "docs/RULES.md's rule table (Markdown), as `make rules-doc` writes it.") var markdown = false

    func validate() throws {
        if json && markdown { throw ValidationError("--json and --markdown: choose one") }
    }

    func run() throws {
        var out = Output()
        if markdown {
            out.write(RulesMarkdown.table(Rules.infos))
        } else if json {
            var w = JSONWriter()
            w.beginArray()
            for r in Rules.infos {
                w.beginObject()
                w.string("id", r.id); w.string("severity", r.severity.rawValue); w.string("title", r.title)
                w.string("explanation", r.explanation)
                if let s = r.doc.severity { w.string("severityRule", s) }
                w.string("firesWhen", r.doc.firesWhen); w.string("evidence", r.doc.evidence)
                w.beginArray("thresholds")
                for t in r.thresholds {
                    w.beginObject(); w.string("name", t.name); w.double("default", t.defaultValue); w.string("unit", t.unit)
                    w.string("meaning", t.meaning); w.endObject()
                }
                w.endArray()
                w.endObject()
            }
            w.endArray()
            out.line(w.output)
        } else {
            for r in Rules.infos {
                out.line("\(r.id)  [\(r.severity.rawValue)]  \(r.title)")
                for t in r.thresholds {
                    out.line("    --rule \(r.id).\(t.name)=VALUE  default \(Self.number(t.defaultValue)) \(t.unit): \(t.meaning)")
                }
                out.write(ReportTextWrap.wrap(r.explanation, indent: "    ", width: 100))
                out.line("")
            }
        }
        out.flush()
    }

    static func number(_ v: Double) -> String { v == v.rounded() ? String(Int(v)) : String(v) }
}
