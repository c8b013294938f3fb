extension CaptureBuilder {
    /// A long session in miniature (issue 32: finished connections summarised): `count` short LE
    /// connections, one after another 2 s apart, each set up (LE Create Connection, Command Status, LE
    /// Connection Complete), six Write Requests answered by Write Responses with their completions, and
    /// closed. Every 3rd connection is to C0:FF:EE:00:00:01, the others each to their own peer. Every 10th
    /// link is lost (Connection Timeout 0x08: a warning `link.disconnect`), the others end with Remote User
    /// Terminated (0x13); every 7th has its first write refused with Insufficient Authentication (0x05:
    /// `security.insufficient`, decided at the end).
    public static func longSession(connections count: Int) -> [UInt8] {
        var b = CaptureBuilder()
        for i in 1 ... count {
            let handle = UInt16(0x40 + i % 4)
            let peer: [UInt8] = i % 3 == 0 ? defaultPeer : [UInt8(i & 0xFF), UInt8(i >> 8), 0x10, 0xEE, 0xFF, 0xC0]
            b.leCreateConnection(2_000_000, peer: peer)
            b.commandStatus(300, 0x200D, 0x00)
            b.leConnected(20_000, handle: handle, peer: peer)
            for w in 0 ..< 6 {
                b.acl(30_000, .sent, handle: handle, [0x12, 0x10, 0x00, UInt8(w), 0x01])   // Write Request, handle 0x0010
                b.completed(2_000, handle: handle)
                if w == 0, i % 7 == 0 {
                    b.acl(28_000, .received, handle: handle, [0x01, 0x12, 0x10, 0x00, 0x05])   // Error Response: Insufficient Authentication
                } else {
                    b.acl(28_000, .received, handle: handle, [0x13])   // Write Response
                }
            }
            b.disconnected(100_000, handle: handle, reason: i % 10 == 0 ? 0x08 : 0x13)
        }
        return b.bytes
    }
}
