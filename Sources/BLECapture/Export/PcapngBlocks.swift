import BLEBytes

/// Walks the blocks of a pcapng file (IETF draft-ietf-opsawg-pcapng, "PCAP Next Generation Dump
/// File Format") to find where each packet's data lies, in the order libpcap returns packets:
/// Enhanced Packet Blocks (type 6, data at +28), Simple Packet Blocks (type 3, data at +12) and the
/// obsolete Packet Block (type 2, data at +28). Each section (SHB) sets its own byte order.
///
/// libpcap reads pcapng for us; this walker exists only so a rewrite (redaction) can patch packet
/// bytes in place, keeping every other byte — options, `if_tsresol`, statistics — as it was.
struct PcapngBlocks {
    /// Smallest block: type, total length, trailing total length.
    static let minimumBlock = 12
    static let sectionHeader: UInt32 = 0x0A0D_0D0A
    static let byteOrderMagic: UInt32 = 0x1A2B_3C4D

    struct Packet: Equatable {
        /// File offset of the block.
        var blockOffset: Int
        /// File offset of the packet data.
        var dataOffset: Int
        /// Captured length as the block declares it (bounded by the block).
        var capturedLength: Int
    }

    private(set) var offset = 0
    private var bigEndian = false

    /// The next packet block after the current position, or nil at the end of the file or at a
    /// block that cannot be walked (length beyond the file, not a multiple of 4).
    mutating func nextPacket(_ bytes: UnsafeRawBufferPointer) -> Packet? {
        while bytes.count - offset >= Self.minimumBlock {
            let rawType = bytes.loadLE32(at: offset)
            if rawType == Self.sectionHeader {
                // The byte-order magic follows type and length; the length is read in that order.
                guard bytes.count - offset >= 12 else { return nil }
                let magic = bytes.loadLE32(at: offset + 8)
                if magic == Self.byteOrderMagic { bigEndian = false }
                else if magic == Self.byteOrderMagic.byteSwapped { bigEndian = true }
                else { return nil }
            }
            let type = bigEndian ? rawType.byteSwapped : rawType
            let length32 = bigEndian ? bytes.loadBE32(at: offset + 4) : bytes.loadLE32(at: offset + 4)
            let length = Int(length32)
            guard length >= Self.minimumBlock, length % 4 == 0, length <= bytes.count - offset else { return nil }   // safe: constant divisor
            let block = offset
            offset += length
            func u32(_ at: Int) -> Int { Int(bigEndian ? bytes.loadBE32(at: block + at) : bytes.loadLE32(at: block + at)) }
            switch type {
            case 6, 2:   // Enhanced Packet Block; obsolete Packet Block
                guard length >= 32 else { continue }
                let captured = min(u32(20), length - 32)
                return Packet(blockOffset: block, dataOffset: block + 28, capturedLength: captured)
            case 3:      // Simple Packet Block: the captured length is what the block holds
                guard length >= 16 else { continue }
                return Packet(blockOffset: block, dataOffset: block + 12, capturedLength: min(u32(8), length - 16))
            default:
                continue
            }
        }
        return nil
    }
}
