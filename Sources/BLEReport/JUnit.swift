#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import BLEAnalysis

/// JUnit XML for CI (`check --junit`): one test suite per capture, one test case per rule; a
/// finding at or above `--fail-on` is a failure of its rule's test case, with the evidence frames.
public enum JUnit {
    public struct Suite {
        var name: String
        var cases: [(name: String, failures: [Finding], error: String?)]
        var time: Double
    }

    public static func suite(file: String, findings: [Finding], failOn: Severity, frames: Int) -> Suite {
        let cases = Rules.infos.map { rule in
            (name: rule.id, failures: findings.filter { $0.rule == rule.id && $0.severity >= failOn }, error: String?.none)
        }
        return Suite(name: file, cases: cases, time: 0)
    }

    public static func unreadable(file: String, error: String) -> Suite {
        Suite(name: file, cases: [(name: "read", failures: [], error: error)], time: 0)
    }

    public static func document(_ suites: [Suite]) -> String {
        let tests = suites.reduce(0) { $0 + $1.cases.count }
        let failures = suites.reduce(0) { $0 + $1.cases.filter { !$0.failures.isEmpty }.count }
        let errors = suites.reduce(0) { $0 + $1.cases.filter { $0.error != nil }.count }
        var s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        s += "<testsuites name=\"bleanalyze\" tests=\"\(tests)\" failures=\"\(failures)\" errors=\"\(errors)\">\n"
        for suite in suites {
            let f = suite.cases.filter { !$0.failures.isEmpty }.count
            let e = suite.cases.filter { $0.error != nil }.count
            s += "  <testsuite name=\"\(escape(suite.name))\" tests=\"\(suite.cases.count)\" failures=\"\(f)\" errors=\"\(e)\">\n"
            for c in suite.cases {
                let family = c.name.split(separator: ".").first.map(String.init) ?? c.name
                s += "    <testcase classname=\"bleanalyze.\(escape(family))\" name=\"\(escape(c.name))\""
                if c.failures.isEmpty && c.error == nil { s += "/>\n"; continue }
                s += ">\n"
                if let error = c.error { s += "      <error message=\"\(escape(error))\"/>\n" }
                if !c.failures.isEmpty {
                    let first = c.failures[0]
                    let why = first.causeText.map { " — why: " + $0 } ?? ""
                    s += "      <failure type=\"\(first.severity.rawValue)\" message=\"\(escape(first.text + why))\">"
                    s += escape(c.failures.map(failureText).joined(separator: "\n"))
                    s += "</failure>\n"
                }
                s += "    </testcase>\n"
            }
            s += "  </testsuite>\n"
        }
        return s + "</testsuites>\n"
    }

    /// One failure in the body: severity, evidence frames, the finding, and its cause with its frames
    /// (the report's `why:` line).
    static func failureText(_ f: Finding) -> String {
        var s = "\(f.severity.rawValue) frames \(f.frames.map { "#\($0)" }.joined(separator: ",")): \(f.text)"
        if let why = f.causeText, let cause = f.cause {
            s += "\n  why: \(why) [\(cause.kind.rawValue); \(cause.frames.map { "#\($0)" }.joined(separator: ", "))]"
        }
        return s
    }

    /// XML text and attribute escaping; control characters (invalid in XML 1.0) become `?`.
    public static func escape(_ text: String) -> String {
        var out = ""
        for ch in text.unicodeScalars {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case _ where ch.value < 0x20 && ch != "\n" && ch != "\t": out += "?"
            default: out.unicodeScalars.append(ch)
            }
        }
        return out
    }
}

extension String {
    /// Writes the string to a file. The corresponding C functions are `fopen`/`fwrite`.
    public func write(to path: String) throws(FileWriteError) {
        guard let f = fopen(path, "wb") else { throw FileWriteError(path: path) }
        defer { fclose(f) }
        var copy = self
        let ok = copy.withUTF8 { fwrite($0.baseAddress, 1, $0.count, f) == $0.count }
        if !ok { throw FileWriteError(path: path) }
    }
}

public struct FileWriteError: Error, CustomStringConvertible {
    public let path: String
    public var description: String { "cannot write \(path)" }
}

/// Paragraph wrapping shared by the report and `rules`.
public enum ReportTextWrap {
    public static func wrap(_ text: String, indent: String, width: Int) -> String { ReportText.wrap(text, indent: indent, width: width) }
}
