import BLEProtocol
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// H4 over a file descriptor: a TCP socket, a serial port, a pty master, or (one packet per read)
/// an HCI user channel socket. Reads go through `H4Parser`; every wait is a `poll` with a deadline.
public final class StreamTransport: HCITransport {
    public let name: String
    private var fd: Int32
    private let isSocket: Bool
    private var parser: H4Parser
    /// Seconds a single `send` may wait for room in the kernel buffer.
    public var sendTimeout: Double = 5
    /// Called once when the first byte arrives (the pty listener drops its own slave then).
    var onFirstByte: (() -> Void)?
    /// Called by `close()` (removes a pty symlink, closes a held slave).
    var onClose: (() -> Void)?

    /// Takes ownership of `fd` (made non-blocking here).
    /// - Parameters:
    ///   - accepting: what the peer may send (`H4Parser.fromController` when we are the host).
    init(fd: Int32, name: String, isSocket: Bool, accepting: Set<HCIPacketType>) {
        self.fd = fd
        self.name = name
        self.isSocket = isSocket
        self.parser = H4Parser(accepting: accepting)
        PosixIO.configure(fd)
    }

    deinit { close() }

    public var framingProblems: [H4Parser.Problem] { parser.problems }

    public func send(_ packet: H4Packet) throws(TransportError) {
        guard fd >= 0 else { throw TransportError(.disconnected, "\(name): closed") }
        let wire = packet.wire
        let deadline = Clock.now() + sendTimeout
        var offset = 0
        while offset < wire.count {
            let n = wire.withUnsafeBytes { raw -> Int in
                // safe: offset < count, so the base address is non-nil and in bounds
                let p = raw.baseAddress.map { $0 + offset }
                let rest = raw.count &- offset   // safe: offset < count
                return isSocket ? Self.sendNoSignal(fd, p, rest) : write(fd, p, rest)
            }
            if n > 0 { offset &+= n; continue }   // safe: n <= remaining
            let code = errno
            if n < 0, code == EINTR { continue }
            if n < 0, code == EAGAIN || code == EWOULDBLOCK {
                switch PosixIO.wait(fd, forWriting: true, timeout: deadline - Clock.now()) {
                case .ready: continue
                case .timedOut: throw TransportError(.timeout, "\(name): the peer took no data for \(sendTimeout) s")
                case .hangup: throw TransportError(.disconnected, "\(name): disconnected")
                }
            }
            if code == EPIPE || code == ECONNRESET || code == EIO {
                throw TransportError(.disconnected, "\(name): disconnected")
            }
            throw TransportError(.io, "\(name): write failed: \(PosixIO.errnoText(code))")
        }
    }

    public func receive(timeout: Double) throws(TransportError) -> H4Packet? {
        let deadline = Clock.now() + max(0, timeout)
        while true {
            if let packet = parser.next() { return packet }
            guard fd >= 0 else { throw TransportError(.disconnected, "\(name): closed") }
            switch PosixIO.wait(fd, timeout: deadline - Clock.now()) {
            case .timedOut: return nil
            case .ready, .hangup: try readAvailable()
            }
        }
    }

    /// Reads what is there into the parser. The corresponding C function is `read`.
    private func readAvailable() throws(TransportError) {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if isSocket { Self.quickAck(fd) }
        if n > 0 {
            if let first = onFirstByte { onFirstByte = nil; first() }
            chunk.withUnsafeBytes { parser.feed(UnsafeRawBufferPointer(rebasing: $0[0 ..< n])) }
            return
        }
        let code = errno
        if n < 0, code == EAGAIN || code == EWOULDBLOCK || code == EINTR { return }
        // 0 = end of stream; EIO = the pty slave was closed; ECONNRESET = the peer reset.
        if n == 0 || code == EIO || code == ECONNRESET {
            let pending = parser.pendingBytes
            throw TransportError(.disconnected, "\(name): disconnected" + (pending > 0 ? " inside a packet (\(pending) bytes of it received)" : ""))
        }
        throw TransportError(.io, "\(name): read failed: \(PosixIO.errnoText(code))")
    }

    public func close() {
        if fd >= 0 { PosixIO.closeDescriptor(fd) }
        fd = -1
        if let hook = onClose { onClose = nil; hook() }
    }

    /// Acknowledges at once what was read (Linux `TCP_QUICKACK`, which the kernel clears again
    /// after a while, so it is set after every read). A peer that writes one H4 packet in two
    /// small writes without TCP_NODELAY (RootCanal 1.10.0: indicator, then the rest) has its
    /// second write held by Nagle's algorithm until our ACK, which delayed ACK sends only 40 ms
    /// later: one packet per 40 ms instead of at once. The corresponding C function is `setsockopt`.
    private static func quickAck(_ fd: Int32) {
        #if os(Linux)
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), Int32(TCP_QUICKACK), &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    /// `send` without SIGPIPE on a closed socket. The corresponding C function is `send`.
    private static func sendNoSignal(_ fd: Int32, _ p: UnsafeRawPointer?, _ count: Int) -> Int {
        #if os(Linux)
        return Glibc.send(fd, p, count, Int32(MSG_NOSIGNAL))
        #else
        return Darwin.send(fd, p, count, 0)   // SO_NOSIGPIPE is set when the socket is made
        #endif
    }
}
