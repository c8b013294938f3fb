#if os(Linux)
import CBluetooth
import Glibc
#endif

/// The Linux HCI monitor channel, as btmon reads it: an `AF_BLUETOOTH`/`BTPROTO_HCI` socket bound
/// with `HCI_CHANNEL_MONITOR` (2) on no device, which copies every packet of every adapter, with the
/// index and mgmt records (Linux `net/bluetooth/hci_sock.c`, `include/net/bluetooth/hci_mon.h`).
/// Each read is one record: the 6-byte `struct hci_mon_hdr` (opcode, index, length; little-endian),
/// then the data. Requirements: a kernel with Bluetooth and CAP_NET_RAW.
public final class MonitorChannel {
    /// `HCI_CHANNEL_MONITOR` and `HCI_DEV_NONE` (Linux `include/net/bluetooth/hci_sock.h`, `hci.h`).
    static let channel: UInt16 = 2
    static let noDevice: UInt16 = 0xFFFF
    public static let headerSize = 6

    private var fd: Int32

    /// Opens the monitor channel.
    /// - Throws: `TransportError` saying what is missing (kernel Bluetooth, the privilege) and how to get it.
    public init() throws(TransportError) {
        #if os(Linux)
        fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard fd >= 0 else { throw Self.error(errno, binding: false) }
        var address = sockaddr_hci()
        address.hci_family = sa_family_t(AF_BLUETOOTH)
        address.hci_dev = Self.noDevice
        address.hci_channel = Self.channel
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_hci>.size)) }
        }
        guard bound == 0 else {
            let code = errno
            PosixIO.closeDescriptor(fd)
            throw Self.error(code, binding: true)
        }
        #else
        fd = -1
        throw TransportError(.unsupported, "the HCI monitor channel is Linux's (btmon); elsewhere use --follow FILE or --proxy")
        #endif
    }

    deinit { close() }

    /// What failed, what is missing and how to get it.
    static func error(_ code: Int32, binding: Bool) -> TransportError {
        #if os(Linux)
        switch code {
        case EAFNOSUPPORT, EPROTONOSUPPORT, ESOCKTNOSUPPORT:
            return TransportError(.unsupported, """
                this kernel has no Bluetooth sockets (AF_BLUETOOTH: \(PosixIO.errnoText(code))): load the module \
                (sudo modprobe bluetooth) or run on a host whose kernel has Bluetooth (containers share the host's kernel; \
                WSL and many CI runners have none); without it use --follow FILE (btmon -w) or --proxy
                """)
        case EPERM, EACCES:
            return TransportError(.open, """
                permission denied: the HCI monitor channel needs CAP_NET_RAW: run as root (sudo), or once \
                sudo setcap cap_net_raw+ep $(command -v bleanalyze)
                """)
        default:
            return TransportError(.open, "cannot \(binding ? "bind" : "open") the HCI monitor channel: \(PosixIO.errnoText(code))")
        }
        #else
        return TransportError(.unsupported, "not supported on this platform")
        #endif
    }

    /// One record into `buffer` (header then data), waiting up to `timeout` seconds; its size,
    /// 0 when none came in time.
    /// - Throws: `TransportError` when the socket fails.
    public func receive(into buffer: UnsafeMutableRawBufferPointer, timeout: Double) throws(TransportError) -> Int {
        guard fd >= 0 else { throw TransportError(.disconnected, "monitor: closed") }
        switch PosixIO.wait(fd, timeout: timeout) {
        case .timedOut: return 0
        case .ready, .hangup: break
        }
        let n = read(fd, buffer.baseAddress, buffer.count)
        if n >= 0 { return n }
        let code = errno
        if code == EAGAIN || code == EINTR { return 0 }
        throw TransportError(.io, "monitor: read failed: \(PosixIO.errnoText(code))")
    }

    public func close() {
        if fd >= 0 { PosixIO.closeDescriptor(fd) }
        fd = -1
    }
}
