import BLEBytes
import BLEProtocol

/// The bytes of an LE advertising report event that the address and name sweep must not replace:
/// a known address's six bytes can run across a report's Data Length or an AD structure's Length
/// and AD Type (found by fuzzing), and replacing them all would turn a complete AD structure into
/// one that runs past the data, which changes findings. The sweep replaces the other bytes of such
/// a run, so the address is still gone.
///
/// Only the data of the AD structures is open to the sweep (Core v5.4 Vol 3 Part C 11: Length, AD
/// Type, AD Data), and in a structure that runs past its report's data, what follows its Length and
/// AD Type. The reports are walked by the decoder the analysis uses (`HCIEvent.decode`,
/// `AdvertisingReports`, `AD.StructureIterator`); the report fields around the data are framing,
/// and their addresses are already replaced through the decoding tables.
enum AdvertisingFraming {
    /// Per payload byte, true where it is framing; nil when `p` is not an advertising report event
    /// that decodes (a malformed event is swept as before: its structure is already broken).
    static func protected(_ p: UnsafeRawBufferPointer) -> [Bool]? {
        var r = ByteReader(p)
        guard case let .advertisingReports(reports)? = try? HCIEvent.decode(&r) else { return nil }
        var mask = [Bool](repeating: true, count: p.count)
        reports.forEach(in: p, base: 0) { report in
            let data = report.data
            var structures = AD.StructureIterator(ByteReader(UnsafeRawBufferPointer(rebasing: p[data.offset ..< data.offset + data.count]), base: data.offset))
            while let s = structures.next() { open(&mask, s.data.remainingRange) }
            // A structure running past the data (or padding): its bytes after Length and AD Type.
            let rest = structures.rest.remainingRange
            if rest.count > 2 { open(&mask, ByteRange(offset: rest.offset + 2, count: rest.count - 2)) }
        }
        return mask
    }

    private static func open(_ mask: inout [Bool], _ range: ByteRange) {
        for k in range.offset ..< range.offset + range.count { mask[k] = false }
    }
}
