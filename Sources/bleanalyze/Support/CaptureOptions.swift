import ArgumentParser
import BLECapture

/// The capture file argument shared by every command that reads one.
struct CaptureArgument: ParsableArguments {
    @Argument(help: "A capture: btsnoop, pcap, pcapng or PacketLogger (.pklg), optionally gzip-compressed. The format is detected from the bytes.")
    var file: String

    /// Opens the capture or exits with code 2 and the reason (with the byte offset where reading failed).
    func open() throws -> CaptureFile {
        do {
            return try CaptureFile(path: file)
        } catch {
            Diagnostics.warn(error.description)
            throw ExitCode(2)
        }
    }
}

/// Exit codes (DESIGN.md): 0 clean, 1 findings at/above `--fail-on` or replay divergences, 2 bad input.
enum ExitCodes {
    static let findings: Int32 = 1
    static let badInput: Int32 = 2
}
