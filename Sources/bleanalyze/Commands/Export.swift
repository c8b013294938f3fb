import ArgumentParser
import BLEAnalysis
import BLECapture
import BLEReport

/// `bleanalyze export IN -o OUT.pcap`: any supported capture as pcap for Wireshark; `-o OUT.pcapng
/// --annotate` also writes each finding and its cause as a packet comment on its key frame.
struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Convert a capture to pcap or pcapng (link type 201: H4 with direction) for Wireshark and tshark.",
        discussion: """
            Every HCI packet is written with its timestamp (microseconds) and direction. Records that \
            are not HCI packets (BlueZ index and log records, PacketLogger syslog and notes) have no \
            place in link type 201 and are left out; their count is printed. When records are left out, \
            the output's frame numbers no longer match the input's (findings and `packets --frame` \
            number the input's frames): a warning on stderr says so and from which frame on they differ. \
            An output ending in .pcapng is written as pcapng; --annotate (pcapng only) analyzes the capture first and \
            puts each finding, with its cause, as a packet comment on its key frame, and the cause on the cause's key \
            frame: in Wireshark the filter is `frame.comment`, with tshark `tshark -r OUT.pcapng -Y frame.comment \
            -T fields -e frame.number -e frame.comment`.
            """)

    @OptionGroup var capture: CaptureArgument
    @Option(name: [.short, .long], help: "The pcap (or .pcapng) file to write.")
    var output: String
    @Flag(name: .long, help: "pcapng only: each finding and its cause as a packet comment on its key frame (frame.comment).")
    var annotate = false
    @OptionGroup var ruleOptions: RuleOptions

    var pcapng: Bool { annotate || output.lowercased().hasSuffix(".pcapng") }

    func validate() throws {
        if annotate, !output.lowercased().hasSuffix(".pcapng") { throw ValidationError("--annotate writes pcapng: name the output OUT.pcapng") }
    }

    /// Packet comments by input frame: each finding on its key frame, its cause on the cause's key frame.
    static func comments(_ findings: [Finding]) -> [Int: [String]] {
        var comments: [Int: [String]] = [:]
        for f in findings {
            guard let key = f.frames.first else { continue }
            var text = "bleanalyze \(f.severity.rawValue.uppercased()) \(f.rule): \(f.text)"
            if let cause = f.cause, let why = f.causeText {
                text += " | why (\(cause.kind.rawValue)): \(why)"
                if let at = cause.frames.first, at != key {
                    comments[at, default: []].append("bleanalyze cause (\(cause.kind.rawValue)) of \(f.rule) at frame \(key): \(why)")
                }
            }
            comments[key, default: []].append(text)
        }
        return comments
    }

    func run() throws {
        let output = output
        let format = pcapng ? "pcapng" : "pcap"
        var comments: [Int: [String]] = [:]
        if annotate {
            let configuration = try ruleOptions.configuration()
            let run = try capture.exitOnError { path throws(CaptureError) in
                try DetectionRun(path: path, name: capture.name, configuration: configuration, largeFileLabel: "analyzing " + capture.name)
            }
            run.progress?.finish()
            comments = Self.comments(run.findings)
        }
        let pcapng = pcapng
        let summary = try capture.exitOnError { path throws(CaptureError) in
            pcapng ? try CaptureExport.toPcapng(input: path, output: output, comments: comments)
                : try CaptureExport.toPcap(input: path, output: output)
        }
        var out = Output()
        out.line("wrote \(output): \(format), link type 201, \(summary.written) of \(summary.frames) frames"
                 + (annotate ? ", \(comments.values.reduce(0) { $0 + $1.count }) comments on \(comments.count) frames" : ""))
        if !summary.skipped.isEmpty {
            let kinds = summary.skipped.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.value) \($0.key.name)" }
            out.line("  left out (not HCI packets): " + kinds.joined(separator: ", "))
        }
        out.flush()
        if let first = summary.firstRenumbered {
            Diagnostics.warn("\(output) holds \(summary.written) of \(summary.frames) frames: its frame numbers no longer match "
                             + "\(capture.name)'s from input frame \(first.input) on (written as frame \(first.output)); "
                             + "findings and `packets --frame` use the input's numbers")
        }
        for issue in summary.issues { Diagnostics.warn("\(capture.name): \(issue)") }
    }
}
