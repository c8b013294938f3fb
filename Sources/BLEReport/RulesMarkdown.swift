import BLEAnalysis

/// docs/RULES.md's rule table, made from the rules' `RuleInfo.doc` (`bleanalyze rules --markdown`,
/// `make rules-doc`): one row per rule of `Rules.all`, in report order. `RulesTableTests` fails
/// when the file's table differs from this.
public enum RulesMarkdown {
    /// The header line the table starts with (the file is spliced from it to the first non-row line).
    public static let header = "| rule | severity | fires when | evidence frames (first one is the key) |"

    public static func table(_ rules: [RuleInfo]) -> String {
        var out = header + "\n|---|---|---|---|\n"
        for r in rules {
            let cells = ["`\(r.id)`", r.doc.severity ?? r.severity.rawValue, r.doc.firesWhen, r.doc.evidence]
            out += "| " + cells.map(cell).joined(separator: " | ") + " |\n"
        }
        return out
    }

    /// A table cell: one line, no bare pipe (it would end the cell).
    static func cell(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for ch in text {
            switch ch {
            case "\n": out.append(" ")
            case "|": out.append("\\|")
            default: out.append(ch)
            }
        }
        return out
    }
}
