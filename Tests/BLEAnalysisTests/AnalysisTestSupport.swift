import BLEAnalysis
import BLECapture
import Foundation

/// Paths and a one-call analysis for the analysis tests.
enum AnalysisFixtures {
    static let repoRoot: URL = {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while url.path != "/" {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
            url.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    }()

    static func capture(_ name: String) -> String { repoRoot.appendingPathComponent("captures/\(name)").path }

    static let sharedReal: URL? = {
        let url = repoRoot.deletingLastPathComponent().appendingPathComponent("shared/captures/real")
        return FileManager.default.fileExists(atPath: url.path) ? url : nil
    }()

    /// Every HCI capture of the project and of the shared corpus (when present).
    static func allCaptures() throws -> [String] {
        let own = try FileManager.default.contentsOfDirectory(atPath: repoRoot.appendingPathComponent("captures").path)
            .filter { $0.hasSuffix(".btsnoop") || $0.hasSuffix(".pcap") || $0.hasSuffix(".pcapng") || $0.hasSuffix(".gz") }
            .map(capture)
        var real: [String] = []
        if let dir = sharedReal {
            real = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { !$0.hasSuffix(".md") && $0 != "SHA256SUMS" }
                .map { dir.appendingPathComponent($0).path }
        } else {
            print("notice: ../shared/captures/real absent; only the project's captures are used")
        }
        return (own + real).sorted()
    }

    static func analyze(_ path: String) throws -> (Analyzer, ReadSummary) {
        let (a, s, _) = try analyzeWithInfo(path)
        return (a, s)
    }

    static func analyzeWithInfo(_ path: String) throws -> (Analyzer, ReadSummary, CaptureInfo) {
        let file = try CaptureFile(path: path)
        let analyzer = Analyzer()
        let summary = file.read { analyzer.consume($0) }
        return (analyzer, summary, file.info)
    }

    static func run(_ executable: String, _ arguments: [String]) -> String? {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = [executable] + arguments
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = FileHandle.nullDevice
        do { try p.run() } catch { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return p.terminationStatus == 0 ? String(decoding: data, as: UTF8.self) : nil
    }
}
