import TestSupport
import Foundation

/// Paths and subprocess helpers for the fuzz-regression and hostile-input tests.
enum Fixtures {
    static let regressions = Repo.root.appendingPathComponent("Tests/Fixtures/fuzz-regressions")
    static let temporaryDirectory: URL = Built.scratch("fuzz-tests")
    static let projectCaptures = Built.projectCaptures

    static func temporary(_ name: String) -> String { temporaryDirectory.appendingPathComponent(name).path }

    static func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = temporary(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func binary(_ name: String) -> String { Built.binary(name) }

    static func run(_ executable: String, _ arguments: [String], limitVirtualKB: Int? = nil) throws -> Built.RunResult {
        try Built.run(executable, arguments, limitVirtualKB: limitVirtualKB, scratch: temporaryDirectory)
    }
}
