#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A pseudo-terminal for `emulate --listen pty[:LINK]`: the host opens the slave (printed as
/// `address`), we keep the master. Until the host's first byte arrives we hold the slave open
/// ourselves, so reads do not fail with EIO before the host opened it; after that, EIO means the
/// host closed it (a disconnection).
final class PTYListener: HCIListener {
    /// `pty:/dev/pts/N`, and the link when there is one.
    let address: String
    let slavePath: String
    private let link: String?
    private var master: Int32
    private var heldSlave: Int32

    /// The corresponding C functions are `posix_openpt`, `grantpt`, `unlockpt`, `ptsname` and `symlink`.
    init(link: String?) throws(TransportError) {
        let (master, slavePath) = try Self.openMaster()
        let slave = cOpen(slavePath, O_RDWR | O_NOCTTY | O_NONBLOCK)
        do throws(TransportError) {
            guard slave >= 0 else { throw TransportError(.open, "pty: cannot open \(slavePath): \(PosixIO.errnoText())") }
            try SerialPort.makeRaw(slave, name: slavePath, baud: 1_000_000, rtscts: false)
            if let link {
                unlink(link)
                guard symlink(slavePath, link) == 0 else {
                    throw TransportError(.open, "pty: cannot link \(link) to \(slavePath): \(PosixIO.errnoText())")
                }
            }
        } catch {
            if slave >= 0 { PosixIO.closeDescriptor(slave) }
            PosixIO.closeDescriptor(master)
            throw error
        }
        self.master = master
        self.heldSlave = slave
        self.slavePath = slavePath
        self.link = link
        self.address = "pty:\(slavePath)" + (link.map { " (linked at \($0))" } ?? "")
    }

    deinit { close() }

    /// A new pty master and its slave's path. On Linux this is what `posix_openpt`, `grantpt`,
    /// `unlockpt` and `ptsname` do (Swift's Glibc module does not export them): open `/dev/ptmx`,
    /// clear the lock with `TIOCSPTLCK`, read the number with `TIOCGPTN` (`linux/tty.h`).
    private static func openMaster() throws(TransportError) -> (Int32, String) {
        #if os(Linux)
        let master = cOpen("/dev/ptmx", O_RDWR | O_NOCTTY)
        guard master >= 0 else { throw TransportError(.open, "pty: cannot open /dev/ptmx: \(PosixIO.errnoText())") }
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard ioctl(master, Self.tiocsptlck, &unlock) == 0, ioctl(master, Self.tiocgptn, &number) == 0 else {
            let text = PosixIO.errnoText()
            PosixIO.closeDescriptor(master)
            throw TransportError(.open, "pty: cannot set up: \(text)")
        }
        return (master, "/dev/pts/\(number)")
        #else
        let master = posix_openpt(O_RDWR | O_NOCTTY)
        guard master >= 0 else { throw TransportError(.open, "pty: posix_openpt failed: \(PosixIO.errnoText())") }
        guard grantpt(master) == 0, unlockpt(master) == 0, let name = ptsname(master) else {
            let text = PosixIO.errnoText()
            PosixIO.closeDescriptor(master)
            throw TransportError(.open, "pty: cannot set up: \(text)")
        }
        return (master, String(cString: name))
        #endif
    }

    #if os(Linux)
    /// `_IOW('T', 0x31, int)` and `_IOR('T', 0x30, unsigned int)` (asm-generic/ioctls.h).
    private static let tiocsptlck: UInt = 0x4004_5431
    private static let tiocgptn: UInt = 0x8004_5430
    #endif

    /// Returns the master side at once; the host may open the slave later.
    func accept(timeout: Double) throws(TransportError) -> HCITransport {
        guard master >= 0 else { throw TransportError(.open, "\(address): closed") }
        let transport = StreamTransport(fd: master, name: "host on \(address)", isSocket: false, accepting: H4Parser.fromHost)
        master = -1   // owned by the transport now
        transport.onFirstByte = { [weak self] in self?.dropSlave() }
        transport.onClose = { [weak self] in self?.close() }
        return transport
    }

    private func dropSlave() {
        if heldSlave >= 0 { PosixIO.closeDescriptor(heldSlave) }
        heldSlave = -1
    }

    func close() {
        dropSlave()
        if master >= 0 { PosixIO.closeDescriptor(master) }
        master = -1
        if let link { unlink(link) }
    }
}
