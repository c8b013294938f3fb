import BLEAnalysis
import BLECapture
import Foundation
import Testing

/// The labelled real corpus: for every capture in `../shared/captures/real/` the project keeps
/// `Tests/Labels/<capture>.labels.json`, the warnings and errors a reader of the frames (tshark as the
/// independent view) holds to be real problems, each with a one-line justification that names the
/// frames. The detectors must report exactly those — nothing missing, nothing extra — as
/// (rule, severity, connection handle, key frame), and where a label names the cause (`cause`: kind and key
/// frame, issue 23) the finding's cause must be that one.
@Suite(.enabled(if: AnalysisFixtures.sharedReal != nil, "../shared/captures/real is absent"))
struct RealCorpusLabelTests {
    struct Key: Hashable, CustomStringConvertible {
        var rule: String
        var severity: String
        var connection: Int?
        var frame: Int
        var description: String { "\(severity) \(rule) conn \(connection.map { String(format: "0x%04x", $0) } ?? "-") frame \(frame)" }
    }

    static let labels = AnalysisFixtures.repoRoot.appendingPathComponent("Tests/Labels")

    static func captures() -> [String] {
        guard let dir = AnalysisFixtures.sharedReal,
              let names = try? FileManager.default.contentsOfDirectory(atPath: dir.path) else { return [] }
        return names.filter { !$0.hasSuffix(".md") && $0 != "SHA256SUMS" }.sorted()
    }

    @Test(arguments: captures())
    func warningsAreExactlyTheLabelledOnes(capture: String) throws {
        let url = Self.labels.appendingPathComponent("\(capture).labels.json")
        let data = try #require(try? Data(contentsOf: url), "no label file for \(capture): label it by reading its frames")
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(root["capture"] as? String == capture)
        var expected = Set<Key>()
        for f in try #require(root["findings"] as? [[String: Any]]) {
            let why = f["why"] as? String ?? ""
            #expect(why.count > 20, "\(capture): every label needs its justification")
            expected.insert(Key(rule: f["rule"] as? String ?? "?", severity: f["severity"] as? String ?? "?",
                                connection: f["connection"] as? Int, frame: f["frame"] as? Int ?? -1))
        }
        let path = try #require(AnalysisFixtures.sharedReal).appendingPathComponent(capture).path
        let analyzer = Analyzer(detect: true)
        _ = try CaptureFile(path: path).read { analyzer.consume($0) }
        let findings = analyzer.finish()
        let found = Set(findings.filter { $0.severity != .info }.map {
            Key(rule: $0.rule, severity: $0.severity.rawValue, connection: $0.connection.map(Int.init), frame: $0.frames.first ?? -1)
        })
        // Each labelled cause (read from the frames: Tests/Labels/CAUSES.md) is the finding's cause: its
        // kind and key frame. A label that finds no cause in the capture ("none") takes none or "none".
        for f in try #require(root["findings"] as? [[String: Any]]) {
            guard let cause = f["cause"] as? [String: Any], let kind = cause["kind"] as? String else { continue }
            let key = Key(rule: f["rule"] as? String ?? "?", severity: f["severity"] as? String ?? "?",
                          connection: f["connection"] as? Int, frame: f["frame"] as? Int ?? -1)
            guard let finding = findings.first(where: {
                $0.rule == key.rule && $0.connection.map(Int.init) == key.connection && $0.frames.first == key.frame
            }) else { continue }
            if kind == "none" {
                #expect(finding.cause == nil || finding.cause?.kind == FindingCause.Kind.none, "\(capture) \(key): labelled with no cause, got \(String(describing: finding.cause?.kind))")
            } else {
                #expect(finding.cause?.kind.rawValue == kind, "\(capture) \(key): cause \(String(describing: finding.cause?.kind)), labelled \(kind)")
                #expect(finding.cause?.frames.first == cause["frame"] as? Int,
                        "\(capture) \(key): cause frame \(String(describing: finding.cause?.frames.first)), labelled \(cause["frame"] ?? "?")")
            }
        }
        let missing = expected.subtracting(found).sorted { $0.description < $1.description }
        let extra = found.subtracting(expected).sorted { $0.description < $1.description }
        #expect(missing.isEmpty, "\(capture): labelled but not found \(missing)")
        #expect(extra.isEmpty, "\(capture): found but not labelled \(extra)")
    }

    /// Information must be true too (issue 24): on a capture whose labels list its `info` findings (read
    /// from the frames, each marked `true` or `false`), every info finding the tool prints is listed as
    /// true, and none listed as false is printed.
    @Test(arguments: captures())
    func infoFindingsAreTheTrueOnes(capture: String) throws {
        let url = Self.labels.appendingPathComponent("\(capture).labels.json")
        guard let data = try? Data(contentsOf: url), let root = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let info = root["info"] as? [[String: Any]] else { return }
        func key(_ f: [String: Any]) -> Key {
            Key(rule: f["rule"] as? String ?? "?", severity: "info", connection: f["connection"] as? Int, frame: f["frame"] as? Int ?? -1)
        }
        let trueOnes = Set(info.filter { $0["true"] as? Bool == true }.map(key))
        let falseOnes = Set(info.filter { $0["true"] as? Bool == false }.map(key))
        for f in info { #expect((f["why"] as? String ?? "").count > 20, "\(capture): every info label needs its justification") }
        let path = try #require(AnalysisFixtures.sharedReal).appendingPathComponent(capture).path
        let analyzer = Analyzer(detect: true)
        _ = try CaptureFile(path: path).read { analyzer.consume($0) }
        let printed = Set(analyzer.finish().filter { $0.severity == .info }.map {
            Key(rule: $0.rule, severity: "info", connection: $0.connection.map(Int.init), frame: $0.frames.first ?? -1)
        })
        let unchecked = printed.subtracting(trueOnes).sorted { $0.description < $1.description }
        let falseShown = printed.intersection(falseOnes).sorted { $0.description < $1.description }
        #expect(unchecked.isEmpty, "\(capture): info findings nobody checked against the frames \(unchecked)")
        #expect(falseShown.isEmpty, "\(capture): info findings that state something false \(falseShown)")
    }

    /// Every label file belongs to a capture of the corpus (a renamed capture leaves no stale label).
    @Test func everyLabelFileHasItsCapture() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.labels.path).filter { $0.hasSuffix(".labels.json") }
        let names = Set(Self.captures())
        for f in files { #expect(names.contains(String(f.dropLast(".labels.json".count))), "stale label file \(f)") }
    }
}

/// Every offset we print is a file offset inside the frame it names: a malformed frame's error offset
/// lies within that frame's record (a cached advertising problem once named another frame's offset).
@Suite struct MalformedOffsetTests {
    @Test func everyMalformedOffsetLiesInsideItsRecord() throws {
        var checked = 0
        for path in try AnalysisFixtures.allCaptures() {
            let file = try CaptureFile(path: path)
            if Datalink.isAirCapture(file.info.datalink) { continue }   // air frames: offsets of the LL packet
            let analyzer = Analyzer()
            var spans: [Int: (Int, Int)] = [:]
            _ = file.read { frame in
                spans[frame.number] = (frame.recordOffset, frame.payloadOffset + frame.payload.count)
                analyzer.consume(frame)
            }
            for (frame, reason, offset) in analyzer.statistics.malformedExamples {
                let span = try #require(spans[frame])
                #expect(offset >= span.0 && offset <= span.1, "\(path) frame \(frame): offset \(offset) outside \(span) (\(reason))")
                checked += 1
            }
        }
        #expect(checked > 0)
    }
}
