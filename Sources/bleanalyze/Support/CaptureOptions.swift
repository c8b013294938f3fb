import ArgumentParser
import BLECapture

/// The capture file argument shared by every command that reads one.
struct CaptureArgument: ParsableArguments {
    @Argument(help: "A capture: btsnoop, pcap, pcapng or PacketLogger (.pklg), optionally gzip-compressed, or - for standard input. The format is detected from the bytes.")
    var file: String

    /// How messages and reports name the capture (`-` is "(standard input)").
    var name: String { file == "-" ? StandardInput.name : file }

    /// The path the readers open: the argument, or for `-` a copy of standard input (made once).
    func readPath() throws(CaptureError) -> String {
        file == "-" ? try StandardInput.path() : file
    }

    /// Opens the capture or exits with code 2 and the reason (with the byte offset where reading failed).
    func open() throws -> CaptureFile {
        try exitOnError { path throws(CaptureError) in try CaptureFile(path: path) }
    }

    /// Runs `body` on the read path; a `CaptureError` is printed, naming the capture as the user did,
    /// and ends the command with exit code 2.
    func exitOnError<T>(_ body: (String) throws(CaptureError) -> T) throws -> T {
        var path = file
        do throws(CaptureError) {
            path = try readPath()
            return try body(path)
        } catch {
            var error = error
            if error.path == path { error.path = name }
            Diagnostics.warn(error.description)
            throw ExitCode(ExitCodes.badInput)
        }
    }
}

/// Exit codes (DESIGN.md): 0 clean, 1 findings at/above `--fail-on` or replay divergences, 2 bad input.
enum ExitCodes {
    static let findings: Int32 = 1
    static let badInput: Int32 = 2
}
