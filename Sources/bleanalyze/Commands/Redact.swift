import ArgumentParser
import BLEAnalysis
import BLECapture

/// `bleanalyze redact IN -o OUT [--keep-names]`: a copy safe to share.
struct Redact: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a copy of a capture with addresses replaced, keys zeroed and names and log text replaced.",
        discussion: """
            The copy has the same format (btsnoop, pcap, pcapng, PacketLogger; a gzip input is written \
            uncompressed), the same records, timestamps and byte counts, so it gives the same findings. \
            Bluetooth addresses are replaced consistently (the same address gets the same fake address in \
            the whole file, keeping its type bits: a static random address stays static random, an RPA \
            stays an RPA). Link keys, LTKs, IRKs, CSRKs, SMP values, passkeys and OOB data are zeroed. \
            Device names (HCI Local Name and Remote Name, AD Local Name, GATT Device Name) and log text \
            (PacketLogger syslog, BlueZ user logging) are replaced unless --keep-names. BlueZ management \
            records (btmon) keep only their opcode. Addresses inside text kept with --keep-names are not \
            rewritten.
            """)

    @Argument(help: "The capture to redact (btsnoop, pcap, pcapng or PacketLogger, optionally gzip-compressed).")
    var input: String
    @Option(name: [.short, .long], help: "Where to write the redacted copy (never the input itself).")
    var output: String
    @Flag(name: .long, help: "Keep device names and log text.")
    var keepNames = false

    func run() throws {
        let summary: RedactionSummary
        do {
            summary = try Redactor.redact(input: input, output: output, options: RedactionOptions(keepNames: keepNames))
        } catch {
            Diagnostics.warn(error.description)
            throw ExitCode(ExitCodes.badInput)
        }
        var out = Output()
        out.line("wrote \(output): \(summary.format.rawValue)\(summary.inputWasCompressed ? " (the gzip input is written uncompressed)" : ""), \(summary.frames) frames, \(summary.framesChanged) changed")
        out.line("  addresses: \(summary.distinctAddresses) replaced in \(summary.addressFields) fields")
        out.line("  keys: \(summary.keyFields) fields zeroed")
        out.line(keepNames ? "  names and log text: kept (--keep-names)"
                           : "  names: \(summary.distinctNames) replaced in \(summary.nameFields) fields; log records: \(summary.logRecords) replaced")
        if summary.controlRecords > 0 { out.line("  BlueZ management records: \(summary.controlRecords) with parameters zeroed") }
        if summary.zeroedTailBytes > 0 {
            out.line("  \(summary.zeroedTailBytes) bytes after the last readable record written as zeros (they could not be checked)")
        }
        out.flush()
        for issue in summary.issues { Diagnostics.warn("\(input): \(issue)") }
    }
}
