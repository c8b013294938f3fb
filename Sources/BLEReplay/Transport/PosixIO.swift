#if canImport(Glibc)
// CBluetooth's headers include <sys/socket.h>: since MonitorChannel.swift (a second importer of
// CBluetooth in this module) the socket type constants are found only through it ("cannot find
// 'SOCK_STREAM' in scope" in debug and release builds with Swift 6.3.1).
#if canImport(CBluetooth)
import CBluetooth
#endif
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Small wrappers over the POSIX calls the transports use; each names the C function it wraps.
enum PosixIO {
    /// The message for the current `errno`. The corresponding C function is `strerror`.
    static func errnoText(_ code: Int32 = errno) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }

    /// Makes `fd` non-blocking and close-on-exec. The corresponding C function is `fcntl`.
    static func configure(_ fd: Int32) {
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
        let fdFlags = fcntl(fd, F_GETFD)
        if fdFlags >= 0 { _ = fcntl(fd, F_SETFD, fdFlags | FD_CLOEXEC) }
    }

    /// The corresponding C function is `close`.
    static func closeDescriptor(_ fd: Int32) {
        _ = close(fd)
    }

    /// `SOCK_STREAM` as the `socket` call takes it on each platform.
    static var streamSocketType: Int32 {
        #if os(Linux)
        Int32(SOCK_STREAM.rawValue)
        #else
        SOCK_STREAM
        #endif
    }

    enum Readiness { case ready, timedOut, hangup }

    /// Waits until `fd` is readable (or writable) or `timeout` seconds pass. EINTR is retried with
    /// the remaining time. The corresponding C function is `poll`.
    static func wait(_ fd: Int32, forWriting: Bool = false, timeout: Double) -> Readiness {
        let deadline = Clock.now() + max(0, timeout)
        while true {
            var entry = pollfd(fd: fd, events: Int16(forWriting ? POLLOUT : POLLIN), revents: 0)
            let remaining = max(0, deadline - Clock.now())
            let millis = Int32(min(remaining * 1000, Double(Int32.max)).rounded(.up))
            let n = poll(&entry, 1, millis)
            if n < 0 {
                if errno == EINTR { continue }
                return .hangup
            }
            if n == 0 { return .timedOut }
            let wanted = Int16(forWriting ? POLLOUT : POLLIN)
            if entry.revents & wanted != 0 { return .ready }
            // POLLHUP / POLLERR / POLLNVAL without data: the peer is gone.
            return .hangup
        }
    }
}

/// Monotonic and wall-clock time.
public enum Clock {
    /// Seconds on a monotonic clock (for deadlines). The corresponding C function is `clock_gettime`.
    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Microseconds since the Unix epoch (capture timestamps).
    public static func wallMicros() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }
}
