import ArgumentParser
import BLEAnalysis
import BLECapture
import BLEReport

/// `bleanalyze redact IN -o OUT [--keep-names] [--drop-values] [--json]`: a copy safe to share.
struct Redact: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a copy of a capture with addresses replaced, keys zeroed and names and log text replaced.",
        discussion: """
            The copy has the same format (btsnoop, pcap, pcapng, PacketLogger; a gzip input is written \
            uncompressed), the same records, timestamps and byte counts, so it gives the same findings. \
            Bluetooth addresses are replaced consistently (the same address gets the same fake address in \
            the whole file, keeping its type bits: a static random address stays static random, an RPA \
            stays an RPA), also where app data (ATT values, advertising data) carries them in either byte \
            order. Link keys, LTKs, IRKs, CSRKs, SMP values, passkeys and OOB data are zeroed. Device names \
            (HCI Local Name and Remote Name, AD Local Name, GATT Device Name) and log text (PacketLogger \
            syslog, BlueZ user logging) are replaced unless --keep-names; so are serial numbers taken from \
            those names (a token of 6+ letters and digits with 3+ digits, such as O38240700268 in \
            NOVA_O38240700268) wherever app data repeats them. BlueZ management records (btmon) keep only \
            their opcode. Addresses inside text kept with --keep-names are not rewritten.

            LE air captures (pcap/pcapng link types 251, 256, 272) are redacted too: access addresses, the \
            CRC init of CONNECT_IND, AdvA/InitA/TargetA/ScanA, advertising data, SMP keys and addresses, \
            LL_ENC_REQ/RSP; every changed packet's CRC is recomputed (a bad CRC stays bad).

            ATT values are the app's own data and are kept: the printable text found in them is listed on \
            stderr (and in --json) with its attribute and first frame. --drop-values replaces every ATT \
            value the analysis does not read (reads, writes, notifications, indications, prepared writes) \
            by a number of the same length (the n-th distinct value of a length becomes n: equal values \
            stay equal); GATT discovery and CCCD values stay, so the findings stay.
            """)

    @Argument(help: "The capture to redact (btsnoop, pcap, pcapng — HCI or LE air — or PacketLogger, optionally gzip-compressed).")
    var input: String
    @Option(name: [.short, .long], help: "Where to write the redacted copy (never the input itself).")
    var output: String
    @Flag(name: .long, help: "Keep device names and log text.")
    var keepNames = false
    @Flag(name: .long, help: "Replace every ATT value the analysis does not read by a number of the same length (00…00, 00…01, …).")
    var dropValues = false
    @Flag(name: .long, help: "Print the summary as one JSON object (with every kept string).")
    var json = false

    func run() throws {
        let options = RedactionOptions(keepNames: keepNames, dropValues: dropValues)
        let summary: RedactionSummary
        do {
            summary = try Redactor.redact(input: input, output: output, options: options)
        } catch {
            Diagnostics.warn(error.description)
            throw ExitCode(ExitCodes.badInput)
        }
        var out = Output()
        out.write(json ? RedactionText.json(summary, output: output, options: options) + "\n"
                       : RedactionText.replaced(summary, output: output, options: options))
        out.flush()
        let kept = RedactionText.kept(summary, output: output, options: options)
        if !kept.isEmpty {
            if json {
                Diagnostics.warn("\(output) keeps \(summary.keptValues) ATT values and \(summary.keptStrings.count) printable strings in them (keptStrings)")
            } else {
                Diagnostics.warn(String(kept.dropLast()))
            }
        }
        for issue in summary.issues { Diagnostics.warn("\(input): \(issue)") }
    }
}
