import ArgumentParser
import BLECapture

/// `bleanalyze export IN -o OUT.pcap`: any supported capture as pcap for Wireshark.
struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Convert a capture to pcap (link type 201: H4 with direction) for Wireshark and tshark.",
        discussion: """
            Every HCI packet is written with its timestamp (microseconds) and direction. Records that \
            are not HCI packets (BlueZ index and log records, PacketLogger syslog and notes) have no \
            place in link type 201 and are left out; their count is printed.
            """)

    @OptionGroup var capture: CaptureArgument
    @Option(name: [.short, .long], help: "The pcap file to write.")
    var output: String

    func run() throws {
        let output = output
        let summary = try capture.exitOnError { path throws(CaptureError) in try CaptureExport.toPcap(input: path, output: output) }
        var out = Output()
        out.line("wrote \(output): pcap, link type 201, \(summary.written) of \(summary.frames) frames")
        if !summary.skipped.isEmpty {
            let kinds = summary.skipped.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.value) \($0.key.name)" }
            out.line("  left out (not HCI packets): " + kinds.joined(separator: ", "))
        }
        out.flush()
        for issue in summary.issues { Diagnostics.warn("\(capture.name): \(issue)") }
    }
}
