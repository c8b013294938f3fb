import ArgumentParser
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `bleanalyze` command line. Only this target prints.
@main
struct BLEAnalyze: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bleanalyze",
        abstract: "Bluetooth HCI captures turned into answers: what happened, connection by connection, and what went wrong.",
        version: BuildInfo.versionLine,
        subcommands: [Report.self, Info.self, Packets.self, Timeline.self, Gatt.self, Adv.self, Check.self, Live.self, Diff.self, RulesCommand.self, Replay.self, Emulate.self, Peer.self, Redact.self, Export.self],
        defaultSubcommand: Report.self)

    /// Like ArgumentParser's `main()`, but usage errors exit with 2 (DESIGN.md: 2 = bad input/usage).
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                Diagnostics.message(fullMessage(for: error))
                terminate(ExitCodes.badInput)
            }
            exit(withError: error)
        }
    }
}
