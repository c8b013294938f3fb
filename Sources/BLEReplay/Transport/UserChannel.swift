#if os(Linux)
import CBluetooth
import Glibc
#endif

/// The Linux HCI user channel (`hci:N`): an `AF_BLUETOOTH`/`BTPROTO_HCI` socket bound with
/// `HCI_CHANNEL_USER`, which takes controller hciN away from the kernel's stack for exclusive use
/// (Linux `net/bluetooth/hci_sock.c`; BlueZ `lib/hci.h`). Each read returns one packet with its H4
/// indicator, each write must be one whole packet: H4 framing without a stream.
///
/// Requirements: a kernel with Bluetooth, CAP_NET_ADMIN, and hciN down (not powered by bluetoothd).
public enum UserChannel {
    /// `struct sockaddr_hci` as the kernel reads it: family, device index, channel.
    public struct Address: Equatable, Sendable {
        /// `AF_BLUETOOTH` (31).
        public var family: UInt16
        /// N of hciN.
        public var device: UInt16
        /// `HCI_CHANNEL_USER` (1).
        public var channel: UInt16

        /// The bytes of `struct sockaddr_hci` (three native-endian 16-bit fields).
        public var bytes: [UInt8] {
            var out: [UInt8] = []
            for v in [family, device, channel] { withUnsafeBytes(of: v) { out += $0 } }
            return out
        }
    }

    /// The address that binds controller `device` on the user channel.
    public static func address(device: UInt16) -> Address {
        #if os(Linux)
        Address(family: UInt16(AF_BLUETOOTH), device: device, channel: UInt16(HCI_CHANNEL_USER))
        #else
        Address(family: 31, device: device, channel: 1)
        #endif
    }

    /// Opens hciN on the user channel.
    /// - Throws: `.unsupported` off Linux or when the kernel has no Bluetooth; `.open` with the
    ///   reason (no such controller, controller up, missing privilege).
    public static func open(device: UInt16) throws(TransportError) -> HCITransport {
        let name = "hci:\(device)"
        #if os(Linux)
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard fd >= 0 else { throw socketError(errno, name: name) }
        var address = sockaddr_hci()
        let wanted = Self.address(device: device)
        address.hci_family = sa_family_t(wanted.family)
        address.hci_dev = wanted.device
        address.hci_channel = wanted.channel
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_hci>.size)) }
        }
        guard bound == 0 else {
            let code = errno
            PosixIO.closeDescriptor(fd)
            throw bindError(code, name: name, device: device)
        }
        return StreamTransport(fd: fd, name: name, isSocket: true, accepting: H4Parser.fromController)
        #else
        throw TransportError(.unsupported, "\(name): the HCI user channel is not supported on this platform (Linux only): use tcp: or tty:")
        #endif
    }

    /// The error for a failed `socket(AF_BLUETOOTH, …)`.
    static func socketError(_ code: Int32, name: String) -> TransportError {
        #if os(Linux)
        switch code {
        case EAFNOSUPPORT, EPROTONOSUPPORT:
            return TransportError(.unsupported, "\(name): kernel has no Bluetooth: use tcp: or tty:")
        case EPERM, EACCES:
            return TransportError(.open, "\(name): permission denied: the user channel needs CAP_NET_ADMIN (run as root)")
        default:
            return TransportError(.open, "\(name): cannot open a Bluetooth socket: \(PosixIO.errnoText(code))")
        }
        #else
        return TransportError(.unsupported, "\(name): not supported on this platform")
        #endif
    }

    /// The error for a failed `bind` on the user channel.
    static func bindError(_ code: Int32, name: String, device: UInt16) -> TransportError {
        #if os(Linux)
        switch code {
        case ENODEV: return TransportError(.open, "\(name): no controller hci\(device)")
        case EBUSY, EALREADY:
            return TransportError(.open, "\(name): hci\(device) is in use by the kernel's stack: power it off first (btmgmt --index \(device) power off)")
        case EPERM, EACCES:
            return TransportError(.open, "\(name): permission denied: the user channel needs CAP_NET_ADMIN (run as root)")
        default:
            return TransportError(.open, "\(name): cannot bind the user channel: \(PosixIO.errnoText(code))")
        }
        #else
        return TransportError(.unsupported, "\(name): not supported on this platform")
        #endif
    }
}
