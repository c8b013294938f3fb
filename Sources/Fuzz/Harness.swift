import BLEBytes

/// The fuzz harnesses: one per entry point that reads hostile bytes. Each takes one input and
/// returns the invariants it saw broken (empty = fine). A trap inside the code under test is the
/// other way to fail; libFuzzer (or the replay runner's exit status) reports it.
///
/// Inputs are small encodings chosen so a mutation changes something meaningful:
/// - `capture`: the bytes of a file handed to `CaptureFile` (format detection, every reader, gzip).
/// - `hci`: an H4 packet type byte, then one HCI packet (display tables, structural checks, typed decoders, renderers).
/// - `l2cap`: ACL fragments for L2CAP reassembly; every PDU goes through the L2CAP/ATT/SMP/AD decoders.
/// - `pipeline`: a compact record stream turned into a btsnoop file and run through the whole analysis
///   (detectors, `packets`, report, timeline/GATT/advertisers renderers) and through redaction.
enum Harness: String, CaseIterable, Sendable {
    case capture, hci, l2cap, pipeline

    func run(_ data: UnsafeRawBufferPointer) -> [String] {
        var check = Invariants()
        switch self {
        case .capture: CaptureHarness.run(data, &check)
        case .hci: HCIHarness.run(data, &check)
        case .l2cap: L2CAPHarness.run(data, &check)
        case .pipeline: PipelineHarness.run(data, &check)
        }
        return check.violations
    }

    func run(_ bytes: [UInt8]) -> [String] {
        bytes.withUnsafeBytes { run($0) }
    }
}

/// Invariants a harness checks beyond "does not trap": offsets inside the file, counts that agree.
struct Invariants {
    private(set) var violations: [String] = []

    mutating func expect(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
        if !condition(), violations.count < 20 { violations.append(message()) }
    }
}

/// Reads the fuzz input as a little stream of numbers and byte runs; running out gives zeros.
struct InputCursor {
    let data: UnsafeRawBufferPointer
    private(set) var position = 0

    init(_ data: UnsafeRawBufferPointer) { self.data = data }

    var isAtEnd: Bool { position >= data.count }
    var remaining: Int { data.count - position }

    mutating func u8() -> UInt8 {
        guard position < data.count else { return 0 }
        defer { position += 1 }
        return data[position]
    }

    mutating func u16() -> UInt16 { UInt16(u8()) | UInt16(u8()) << 8 }

    /// Up to `count` bytes (fewer at the end of the input).
    mutating func bytes(_ count: Int) -> UnsafeRawBufferPointer {
        let n = min(count, remaining)
        defer { position += n }
        return UnsafeRawBufferPointer(rebasing: data[position ..< position + n])
    }
}
