import CZlib

/// zlib (RFC 1950) streams in memory, through the system zlib: the compressed part of an Android
/// btsnooz summary, and its encoder for test fixtures. Never hand-written inflate.
public enum ZlibStream {
    /// Largest inflated output accepted: a btsnooz ring buffer is 256 KiB on the phone
    /// (`BTSNOOP_MEM_BUFFER_SIZE`), so anything far beyond is taken as corrupt.
    public static let maxInflated = 64 << 20

    public enum Failure: Error, Equatable, Sendable {
        /// zlib reported an error (a damaged stream); `produced` bytes inflated before it.
        case corrupt(code: Int32, produced: Int)
        /// The stream ended before its end marker.
        case truncated(produced: Int)
        case tooLarge
    }

    /// Inflates a zlib stream. On a damaged or cut stream, `partial` holds what inflated before
    /// the damage, so a reader can keep the records that are whole.
    /// The corresponding C functions are `inflateInit_`, `inflate` and `inflateEnd`.
    public static func inflate(_ input: [UInt8], limit: Int = maxInflated) -> (output: [UInt8], failure: Failure?) {
        var stream = z_stream()
        guard inflateInit_(&stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            return ([], .corrupt(code: Z_MEM_ERROR, produced: 0))
        }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var failure: Failure? = nil
        input.withUnsafeBytes { inBytes in
            stream.next_in = UnsafeMutablePointer(mutating: inBytes.bindMemory(to: UInt8.self).baseAddress)
            stream.avail_in = UInt32(inBytes.count)
            while true {
                let (rc, produced) = chunk.withUnsafeMutableBytes { out -> (Int32, Int) in
                    stream.next_out = out.bindMemory(to: UInt8.self).baseAddress
                    stream.avail_out = UInt32(out.count)
                    let rc = CZlib.inflate(&stream, Z_NO_FLUSH)
                    return (rc, out.count - Int(stream.avail_out))   // safe: avail_out ≤ count
                }
                output.append(contentsOf: chunk[0..<produced])
                if output.count > limit { failure = .tooLarge; return }
                if rc == Z_STREAM_END { return }
                if rc == Z_BUF_ERROR || (rc == Z_OK && produced == 0 && stream.avail_in == 0) {
                    failure = .truncated(produced: output.count); return
                }
                if rc != Z_OK { failure = .corrupt(code: rc, produced: output.count); return }
            }
        }
        return (output, failure)
    }

    /// Compresses `input` as one zlib stream (test fixtures: the btsnooz encoder).
    /// The corresponding C functions are `compressBound` and `compress2`.
    public static func deflate(_ input: [UInt8], level: Int32 = Z_DEFAULT_COMPRESSION) -> [UInt8] {
        var size = compressBound(uLong(input.count))
        var output = [UInt8](repeating: 0, count: Int(size))
        let rc = output.withUnsafeMutableBufferPointer { out in
            input.withUnsafeBufferPointer { inp in
                compress2(out.baseAddress, &size, inp.baseAddress, uLong(inp.count), level)
            }
        }
        guard rc == Z_OK else { return [] }
        output.removeSubrange(Int(size)...)
        return output
    }
}
