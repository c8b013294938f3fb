import BLEBytes

/// Where the attribute values lie in an ATT PDU (Core v5.4 Vol 3 Part F 3.4): what redaction
/// replaces or keeps and what the HTML report shows. Unlike `ATT.decode` this is lenient: it walks
/// whatever bytes are there (a PDU cut by the capture or by ATT_MTU − 1 still has its values found),
/// so it never throws.
extension ATT {
    /// One value in a PDU: its offset from the ATT opcode, its length, and the attribute handle the
    /// PDU names for it (nil when the PDU names none: a read response, Read Multiple).
    public struct ValueSpan: Equatable, Sendable {
        public var start: Int
        public var count: Int
        public var handle: UInt16?
        @inlinable public init(start: Int, count: Int, handle: UInt16?) { (self.start, self.count, self.handle) = (start, count, handle) }
    }

    /// Where the value starts after the opcode in the PDUs that carry one value running to the end of
    /// the PDU: Read / Read Blob Response (3.4.4.4, 3.4.4.6: after the opcode), Write Request /
    /// Command and Signed Write Command (3.4.5.1, 3.4.5.3, 3.4.5.4: after the Attribute Handle;
    /// the signature included), Handle Value Notification / Indication (3.4.7.1, 3.4.7.2), Prepare
    /// Write Request / Response (3.4.6.1, 3.4.6.2: after the handle and Value Offset). Nil for others.
    @inlinable
    public static func valueStart(_ opcode: ATTOpcode) -> Int? {
        switch opcode {
        case .handleValueNotification, .handleValueIndication, .writeRequest, .writeCommand, .signedWriteCommand: 3
        case .readResponse, .readBlobResponse: 1
        case .prepareWriteRequest, .prepareWriteResponse: 5
        default: nil
        }
    }

    /// The Attribute Handle after the opcode, for the PDUs whose first parameter is one (Read, Read
    /// Blob, Write Request / Command, Prepare Write, Handle Value Notification / Indication), read
    /// without moving `r`; `opcodeAt` is where the opcode is (`L2CAP.basicHeaderLength` in an L2CAP
    /// PDU). Nil when the PDU stops before it.
    @inlinable
    public static func peekHandle(_ r: ByteReader, opcodeAt: Int = 0) -> UInt16? { r.peekU16le(at: opcodeAt &+ 1) }   // safe: small offset

    /// The value spans of `pdu` (opcode first), in order; empty for PDUs without values.
    ///
    /// Read By Type Response (3.4.4.2): Length, then (handle, value) pairs of that length; a last
    /// partial pair is left out. Read Multiple Variable Response (3.4.4.12) and Multiple Handle Value
    /// Notification (3.4.7.4): length-prefixed values, the last one cut to what the PDU holds. Signed
    /// Write (3.4.5.4): the value without its 12-byte Authentication Signature.
    public static func valueSpans(_ pdu: ByteReader) -> [ValueSpan] {
        guard let code = pdu.getU8(at: 0) else { return [] }
        let n = pdu.bytes.count
        let opcode = ATTOpcode(code)
        func handle(at i: Int) -> UInt16? { pdu.getU16le(at: i) }
        func span(_ start: Int, _ end: Int, _ h: UInt16?) -> [ValueSpan] {
            end > start ? [ValueSpan(start: start, count: end &- start, handle: h)] : []   // safe: end > start
        }
        switch opcode {
        case .readResponse, .readBlobResponse, .readMultipleResponse:
            return span(1, n, nil)
        case .readByTypeResponse:
            guard let length = pdu.getU8(at: 1).map(Int.init), length > 2 else { return [] }
            var out: [ValueSpan] = []
            var i = 2
            while i + length <= n {
                out += span(i + 2, i + length, handle(at: i))
                i += length
            }
            return out
        case .readMultipleVariableResponse:
            var out: [ValueSpan] = []
            var i = 1
            while let length = pdu.getU16le(at: i) {
                let end = min(n, i + 2 + Int(length))
                out += span(i + 2, end, nil)
                i = end
            }
            return out
        case .writeRequest, .writeCommand, .handleValueNotification, .handleValueIndication:
            guard let h = handle(at: 1) else { return [] }
            return span(3, n, h)
        case .signedWriteCommand:
            guard let h = handle(at: 1), n >= 3 + ATT.signatureLength else { return [] }
            return span(3, n - ATT.signatureLength, h)
        case .prepareWriteRequest, .prepareWriteResponse:
            guard let h = handle(at: 1) else { return [] }
            return span(5, n, h)
        case .multipleHandleValueNotification:
            var out: [ValueSpan] = []
            var i = 1
            while i + 4 <= n, let h = handle(at: i), let length = pdu.getU16le(at: i + 2) {
                let end = min(n, i + 4 + Int(length))
                out += span(i + 4, end, h)
                i = end
            }
            return out
        default:
            return []
        }
    }
}
