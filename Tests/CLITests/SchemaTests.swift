import TestSupport
import Foundation
import Testing

/// `bleanalyze FILE --json` against docs/report-schema.json (JSON Schema 2020-12), validated with
/// Python's `jsonschema` from the project's venv, for every capture in captures/ and the real corpus.
@Suite struct SchemaTests {
    static let schema = CLI.repoRoot.appendingPathComponent("docs/report-schema.json")
    static let python = Repo.venv.appendingPathComponent("bin/python")

    /// Validates documents named `SCHEMA=PATH` against docs/SCHEMA-schema.json; the schemas refer to each
    /// other by `$id` (the timeline's connections are the report's).
    static let validator = """
    import json, sys, glob, os, jsonschema
    from referencing import Registry, Resource
    docs = sys.argv[1]
    schemas = {os.path.basename(p)[:-len("-schema.json")]: json.load(open(p)) for p in glob.glob(os.path.join(docs, "*-schema.json"))}
    registry = Registry().with_resources([(s["$id"], Resource.from_contents(s)) for s in schemas.values()])
    validators = {}
    for name, schema in schemas.items():
        jsonschema.Draft202012Validator.check_schema(schema)
        validators[name] = jsonschema.Draft202012Validator(schema, registry=registry)
    failures = 0
    for arg in sys.argv[2:]:
        name, path = arg.split("=", 1)
        for error in list(validators[name].iter_errors(json.load(open(path))))[:5]:
            failures += 1
            print(f"{name} {path}: {'/'.join(map(str, error.absolute_path))}: {error.message[:300]}")
    print(f"validated {len(sys.argv) - 2} documents, {failures} errors")
    sys.exit(1 if failures else 0)
    """

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: SchemaTests.python.path), ".venv absent (make venv): no jsonschema"))
    func everyReportValidatesAgainstTheSchema() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bleanalyze-schema-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var documents: [String] = []
        // The report, and the timeline, gatt and adv documents (docs/*-schema.json), of every capture.
        let commands: [(schema: String, arguments: [String])] = [("report", []), ("timeline", ["timeline"]), ("gatt", ["gatt"]), ("adv", ["adv"])]
        for (i, path) in try CLI.allCaptures().enumerated() {
            for (schema, arguments) in commands {
                let r = try CLI.run(arguments + [path, "--json"])
                guard r.status == 0 else { Issue.record("\(arguments) \(path): exit \(r.status) \(r.stderr)"); continue }
                let file = dir.appendingPathComponent("\(i)-\(schema).json")
                try Data(r.stdout.utf8).write(to: file)
                documents.append(schema + "=" + file.path)
            }
        }
        // Summarised connections (a long session's rows, `summarised: true`) and counted info findings.
        let long = dir.appendingPathComponent("long-session.btsnoop")
        try Data(CaptureBuilder.longSession(connections: 60)).write(to: long)
        let summarised = try CLI.run([long.path, "--json", "--keep-connections", "0"])
        #expect(summarised.status == 0 && summarised.stdout.contains("\"summarised\":true"), "\(summarised.stderr)")
        try Data(summarised.stdout.utf8).write(to: dir.appendingPathComponent("long-report.json"))
        documents.append("report=" + dir.appendingPathComponent("long-report.json").path)
        #expect(documents.count >= 4 * 30)
        let (status, text) = try Tool.outcome(Self.python, ["-c", Self.validator, Self.schema.deletingLastPathComponent().path] + documents)
        #expect(!text.contains("No module named 'jsonschema'"), "jsonschema missing from .venv: run make venv (the Makefile installs it)")
        #expect(status == 0, "\(text)")
        #expect(text.contains("validated \(documents.count) documents, 0 errors"), "\(text)")
    }

    /// The schema and docs/REPORT.md name the version the tool writes and every finding field.
    @Test func schemaAndDocsMatchTheTool() throws {
        let schema = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: Self.schema)) as? [String: Any])
        let version = (schema["properties"] as? [String: Any])?["schemaVersion"] as? [String: Any]
        let written = try CLI.json(try CLI.run([CLI.capture("healthy.btsnoop"), "--json"]).stdout)["schemaVersion"] as? Int
        #expect(version?["const"] as? Int == written)
        let doc = try String(contentsOf: CLI.repoRoot.appendingPathComponent("docs/REPORT.md"), encoding: .utf8)
        for field in ["schemaVersion", "rule", "severity", "connection", "connectionIndex", "time", "frames", "message", "report-schema.json"] {
            #expect(doc.contains("`\(field)`"), "docs/REPORT.md documents \(field)")
        }
    }
}
