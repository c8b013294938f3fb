import BLEProtocol
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// H4 over TCP: what Bumble's `tcp-server` transport and Android's RootCanal (`--hci_port`,
/// 6402 by default) speak. No framing beyond H4 itself.
enum TCPSocket {
    /// Connects to `host:port` within `timeout` seconds (each resolved address in turn).
    /// The corresponding C functions are `getaddrinfo`, `socket`, `connect` and `poll`.
    static func connect(host: String, port: UInt16, timeout: Double) throws(TransportError) -> StreamTransport {
        let name = "tcp:\(host):\(port)"
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = PosixIO.streamSocketType
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            throw TransportError(.open, "\(name): cannot resolve \(host): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(list) }
        let deadline = Clock.now() + timeout
        var lastError = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let ai = entry {
            entry = ai.pointee.ai_next
            let fd = socket(ai.pointee.ai_family, ai.pointee.ai_socktype, ai.pointee.ai_protocol)
            guard fd >= 0 else { lastError = PosixIO.errnoText(); continue }
            PosixIO.configure(fd)
            noSignalPipe(fd)
            if cConnect(fd, ai.pointee.ai_addr, ai.pointee.ai_addrlen) == 0 || errno == EINPROGRESS {
                switch PosixIO.wait(fd, forWriting: true, timeout: deadline - Clock.now()) {
                case .ready, .hangup:
                    var error: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
                    if error == 0 {
                        noDelay(fd)
                        return StreamTransport(fd: fd, name: name, isSocket: true, accepting: H4Parser.fromController)
                    }
                    lastError = PosixIO.errnoText(error)
                case .timedOut:
                    lastError = "no answer within \(timeout) s"
                }
            } else {
                lastError = PosixIO.errnoText()
            }
            PosixIO.closeDescriptor(fd)
        }
        throw TransportError(.open, "\(name): cannot connect: \(lastError) (is the controller listening?)")
    }

    /// Sends each packet at once (no Nagle: an H4 packet is one small write, and a proxy must not
    /// hold it for the peer's ACK).
    static func noDelay(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Sets SO_NOSIGPIPE where it exists (Darwin); Linux uses MSG_NOSIGNAL per send.
    static func noSignalPipe(_ fd: Int32) {
        #if canImport(Darwin)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }
}

/// The C `connect`, out of the way of `TCPSocket.connect`.
@inline(__always)
private func cConnect(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t) -> Int32 {
    connect(fd, address, length)
}

/// A listening TCP socket for `emulate --listen tcp:HOST:PORT` (port 0 picks a free port).
final class TCPListener: HCIListener {
    private var fd: Int32
    let address: String

    /// The corresponding C functions are `getaddrinfo`, `socket`, `bind`, `listen`, `getsockname`.
    init(host: String, port: UInt16) throws(TransportError) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = PosixIO.streamSocketType
        hints.ai_flags = AI_PASSIVE
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let ai = list else {
            throw TransportError(.open, "tcp:\(host):\(port): cannot resolve \(host): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(list) }
        let fd = socket(ai.pointee.ai_family, ai.pointee.ai_socktype, ai.pointee.ai_protocol)
        guard fd >= 0 else { throw TransportError(.open, "tcp:\(host):\(port): \(PosixIO.errnoText())") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, ai.pointee.ai_addr, ai.pointee.ai_addrlen) == 0, listen(fd, 1) == 0 else {
            let text = PosixIO.errnoText()
            PosixIO.closeDescriptor(fd)
            throw TransportError(.open, "tcp:\(host):\(port): cannot listen: \(text)")
        }
        PosixIO.configure(fd)
        self.fd = fd
        self.address = "tcp:\(host):\(Self.boundPort(fd) ?? port)"
    }

    deinit { close() }

    /// The port the kernel gave the socket. The corresponding C function is `getsockname`.
    static func boundPort(_ fd: Int32) -> UInt16? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { return nil }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) } }
        case AF_INET6:
            return withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) } }
        default:
            return nil
        }
    }

    /// Waits up to `timeout` seconds for one host. The corresponding C function is `accept`.
    func accept(timeout: Double) throws(TransportError) -> HCITransport {
        guard fd >= 0 else { throw TransportError(.open, "\(address): closed") }
        switch PosixIO.wait(fd, timeout: timeout) {
        case .timedOut: throw TransportError(.timeout, "\(address): no host connected within \(timeout) s")
        case .hangup: throw TransportError(.open, "\(address): listening socket failed")
        case .ready: break
        }
        let client = cAccept(fd)
        guard client >= 0 else { throw TransportError(.open, "\(address): accept failed: \(PosixIO.errnoText())") }
        TCPSocket.noSignalPipe(client)
        TCPSocket.noDelay(client)
        return StreamTransport(fd: client, name: "host on \(address)", isSocket: true, accepting: H4Parser.fromHost)
    }

    func close() {
        if fd >= 0 { PosixIO.closeDescriptor(fd) }
        fd = -1
    }
}

@inline(__always)
private func cAccept(_ fd: Int32) -> Int32 { accept(fd, nil, nil) }
