/// Where to find a controller (`replay --hci`) or how to wait for a host (`emulate --listen`).
///
/// - `hci:N` — Linux HCI user channel on hciN (exclusive use of a real controller).
/// - `tcp:HOST:PORT` — H4 over TCP (Bumble `tcp-server`, RootCanal's HCI port); IPv6 hosts in brackets.
/// - `tty:PATH[,BAUD][,rtscts]` — H4 over a serial port or pty (default 1000000 baud, as Bumble's serial transport).
/// - `pty[:LINK]` — listen only: a new pseudo-terminal, optionally symlinked at LINK.
public enum TransportURI: Equatable, Sendable, CustomStringConvertible {
    case userChannel(device: UInt16)
    case tcp(host: String, port: UInt16)
    case tty(path: String, baud: Int, rtscts: Bool)
    case pty(link: String?)

    public static let defaultBaud = 1_000_000

    /// Parses a URI.
    /// - Throws: `TransportError.Kind.invalidURI` with what was expected.
    public init(_ text: String) throws(TransportError) {
        let usage = "expected hci:N, tcp:HOST:PORT, tty:PATH[,BAUD] or pty[:LINK], not \"\(text)\""
        guard let colon = text.firstIndex(of: ":") else {
            if text == "pty" { self = .pty(link: nil); return }
            throw TransportError(.invalidURI, usage)
        }
        let scheme = text[..<colon]
        let rest = String(text[text.index(after: colon)...])
        switch scheme {
        case "hci":
            let digits = rest.hasPrefix("hci") ? String(rest.dropFirst(3)) : rest
            guard let n = UInt16(digits) else { throw TransportError(.invalidURI, "hci: takes a controller index (hci:0), not \"\(rest)\"") }
            self = .userChannel(device: n)
        case "tcp":
            guard let split = rest.lastIndex(of: ":"), let port = UInt16(rest[rest.index(after: split)...]) else {
                throw TransportError(.invalidURI, "tcp: takes HOST:PORT (tcp:127.0.0.1:6402), not \"\(rest)\"")
            }
            var host = String(rest[..<split])
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            guard !host.isEmpty else { throw TransportError(.invalidURI, "tcp: needs a host (tcp:127.0.0.1:\(port))") }
            self = .tcp(host: host, port: port)
        case "tty":
            let parts = rest.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard let path = parts.first, !path.isEmpty else { throw TransportError(.invalidURI, "tty: needs a device path (tty:/dev/ttyUSB0)") }
            var baud = Self.defaultBaud, rtscts = false
            for option in parts.dropFirst() {
                if option == "rtscts" { rtscts = true } else if let b = Int(option), b > 0 { baud = b } else {
                    throw TransportError(.invalidURI, "tty: option \"\(option)\" is neither a baud rate nor rtscts")
                }
            }
            self = .tty(path: path, baud: baud, rtscts: rtscts)
        case "pty":
            self = .pty(link: rest.isEmpty ? nil : rest)
        default:
            throw TransportError(.invalidURI, usage)
        }
    }

    public var description: String {
        switch self {
        case let .userChannel(n): "hci:\(n)"
        case let .tcp(host, port): host.contains(":") ? "tcp:[\(host)]:\(port)" : "tcp:\(host):\(port)"
        case let .tty(path, baud, rtscts): "tty:\(path),\(baud)" + (rtscts ? ",rtscts" : "")
        case let .pty(link): link.map { "pty:\($0)" } ?? "pty"
        }
    }
}

/// Where `emulate` waits for a host.
public protocol HCIListener: AnyObject {
    /// What to tell the host: `tcp:127.0.0.1:40123`, `pty:/dev/pts/5`.
    var address: String { get }
    /// Waits for a host. For a pty this returns at once (the host opens the slave when it likes).
    func accept(timeout: Double) throws(TransportError) -> HCITransport
    func close()
}

/// Opens transports from URIs.
public enum Transports {
    /// Connects to a controller.
    /// - Parameter timeout: seconds to wait for a TCP connection.
    /// - Throws: `TransportError` (`.unsupported` for `hci:` off Linux or without kernel Bluetooth).
    public static func open(_ uri: TransportURI, timeout: Double = 5) throws(TransportError) -> HCITransport {
        switch uri {
        case let .userChannel(n): return try UserChannel.open(device: n)
        case let .tcp(host, port): return try TCPSocket.connect(host: host, port: port, timeout: timeout)
        case let .tty(path, baud, rtscts): return try SerialPort.open(path: path, baud: baud, rtscts: rtscts)
        case .pty: throw TransportError(.invalidURI, "pty is for emulate --listen; connect to a pty with tty:PATH")
        }
    }

    /// Prepares to accept a host (`emulate --listen`): `tcp:HOST:PORT` (port 0 = any free port) or `pty[:LINK]`.
    public static func listen(_ uri: TransportURI) throws(TransportError) -> HCIListener {
        switch uri {
        case let .tcp(host, port): return try TCPListener(host: host, port: port)
        case let .pty(link): return try PTYListener(link: link)
        default: throw TransportError(.invalidURI, "emulate listens on tcp:HOST:PORT or pty[:LINK], not \(uri)")
        }
    }
}
