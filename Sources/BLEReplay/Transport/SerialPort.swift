import BLEProtocol
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// H4 over a serial port or a pty (`tty:/dev/ttyUSB0,115200[,rtscts]`): a UART controller, or
/// Bumble's `pty:PATH` transport. The line is set raw (no echo, no translation, 8N1).
enum SerialPort {
    /// Opens and configures the port. The corresponding C functions are `open`, `tcgetattr`,
    /// `cfmakeraw`, `cfsetspeed` and `tcsetattr`.
    static func open(path: String, baud: Int, rtscts: Bool) throws(TransportError) -> StreamTransport {
        let name = "tty:\(path)"
        let fd = cOpen(path, O_RDWR | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else { throw TransportError(.open, "\(name): cannot open: \(PosixIO.errnoText())") }
        do throws(TransportError) {
            try makeRaw(fd, name: name, baud: baud, rtscts: rtscts)
        } catch {
            PosixIO.closeDescriptor(fd)
            throw error
        }
        return StreamTransport(fd: fd, name: name, isSocket: false, accepting: H4Parser.fromController)
    }

    /// Raw mode, `baud`, receiver on, modem lines ignored unless `rtscts`.
    static func makeRaw(_ fd: Int32, name: String, baud: Int, rtscts: Bool) throws(TransportError) {
        var tio = termios()
        guard tcgetattr(fd, &tio) == 0 else {
            throw TransportError(.open, "\(name): not a terminal: \(PosixIO.errnoText())")
        }
        cfmakeraw(&tio)
        tio.c_cflag |= tcflag_t(CLOCAL | CREAD)
        if rtscts { tio.c_cflag |= tcflag_t(CRTSCTS) } else { tio.c_cflag &= ~tcflag_t(CRTSCTS) }
        guard let speed = speed(baud) else {
            throw TransportError(.invalidURI, "\(name): unsupported baud rate \(baud)")
        }
        cfsetispeed(&tio, speed)
        cfsetospeed(&tio, speed)
        guard tcsetattr(fd, TCSANOW, &tio) == 0 else {
            throw TransportError(.open, "\(name): cannot configure: \(PosixIO.errnoText())")
        }
    }

    /// The termios speed for a baud rate; nil for rates the platform has no constant for.
    static func speed(_ baud: Int) -> speed_t? {
        #if os(Linux)
        let table: [(Int, Int32)] = [
            (9600, B9600), (19200, B19200), (38400, B38400), (57600, B57600), (115_200, B115200),
            (230_400, B230400), (460_800, B460800), (500_000, B500000), (576_000, B576000),
            (921_600, B921600), (1_000_000, B1000000), (1_152_000, B1152000), (1_500_000, B1500000),
            (2_000_000, B2000000), (3_000_000, B3000000), (4_000_000, B4000000),
        ]
        return table.first { $0.0 == baud }.map { speed_t($0.1) }
        #else
        return baud > 0 ? speed_t(baud) : nil
        #endif
    }
}

/// The C `open`, callable where a type has its own `open`. The corresponding C function is `open`.
@inline(__always)
func cOpen(_ path: String, _ flags: Int32) -> Int32 { open(path, flags) }

/// A serial line read as a byte stream (`live --uart`: the BlueZ monitor protocol a firmware writes).
public enum SerialLine {
    /// Opens `path` for reading; a terminal (a serial port, a pty) is set raw, at `baud` when given.
    /// - Returns: the descriptor, non-blocking.
    public static func open(path: String, baud: Int?) throws(TransportError) -> Int32 {
        let name = "tty:\(path)"
        let fd = cOpen(path, O_RDONLY | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else { throw TransportError(.open, "\(name): cannot open: \(PosixIO.errnoText())") }
        guard isatty(fd) != 0 else { return fd }
        do throws(TransportError) {
            if let baud {
                try SerialPort.makeRaw(fd, name: name, baud: baud, rtscts: false)
            } else {
                var tio = termios()
                if tcgetattr(fd, &tio) == 0 { cfmakeraw(&tio); tio.c_cflag |= tcflag_t(CLOCAL | CREAD); _ = tcsetattr(fd, TCSANOW, &tio) }
            }
        } catch {
            PosixIO.closeDescriptor(fd)
            throw error
        }
        return fd
    }
}
