import BLEProtocol
@testable import BLEReplay
import Foundation
import Testing

@Suite struct TransportURITests {
    @Test(arguments: [
        ("hci:0", TransportURI.userChannel(device: 0)),
        ("hci:hci1", .userChannel(device: 1)),
        ("tcp:127.0.0.1:6402", .tcp(host: "127.0.0.1", port: 6402)),
        ("tcp:[::1]:6402", .tcp(host: "::1", port: 6402)),
        ("tcp:localhost:1", .tcp(host: "localhost", port: 1)),
        ("tty:/dev/ttyUSB0", .tty(path: "/dev/ttyUSB0", baud: 1_000_000, rtscts: false)),
        ("tty:/dev/ttyS1,115200,rtscts", .tty(path: "/dev/ttyS1", baud: 115_200, rtscts: true)),
        ("pty", .pty(link: nil)),
        ("pty:/tmp/hci-link", .pty(link: "/tmp/hci-link")),
    ])
    func parses(_ text: String, _ expected: TransportURI) throws {
        #expect(try TransportURI(text) == expected)
    }

    @Test(arguments: ["tcp:127.0.0.1", "tcp::6402", "tcp:host:99999", "udp:1.2.3.4:5", "hci:x", "tty:", "tty:/dev/x,fast", "", "6402"])
    func rejects(_ text: String) {
        #expect(throws: TransportError(.invalidURI, "")) { try TransportURI(text) }
    }

    @Test func roundTripsThroughDescription() throws {
        for text in ["hci:2", "tcp:127.0.0.1:6402", "tcp:[::1]:7", "tty:/dev/ttyACM0,921600", "pty", "pty:/tmp/l"] {
            let uri = try TransportURI(text)
            #expect(try TransportURI(uri.description) == uri)
        }
    }

    @Test func ptyIsOnlyForListening() {
        #expect(throws: TransportError(.invalidURI, "")) { try Transports.open(.pty(link: nil)) }
        #expect(throws: TransportError(.invalidURI, "")) { try Transports.listen(.userChannel(device: 0)) }
    }
}

@Suite struct UserChannelTests {
    /// `struct sockaddr_hci { sa_family_t hci_family; unsigned short hci_dev; unsigned short hci_channel; }`
    /// with AF_BLUETOOTH = 31 and HCI_CHANNEL_USER = 1 (BlueZ lib/hci.h, lib/bluetooth.h).
    @Test func socketAddressBindsTheUserChannelOfTheDevice() {
        let address = UserChannel.address(device: 3)
        #expect(address == UserChannel.Address(family: 31, device: 3, channel: 1))
        #expect(address.bytes == [31, 0, 3, 0, 1, 0])
        #expect(UserChannel.address(device: 0x0102).bytes == [31, 0, 2, 1, 1, 0])
    }

    /// This machine has no kernel Bluetooth: the error must say what to use instead. (On a machine
    /// with Bluetooth the open still fails without hci7 or privileges, with the reason.)
    @Test func openingWithoutKernelBluetoothSaysWhatToUse() {
        do {
            let t = try Transports.open(.userChannel(device: 7))
            t.close()
            Issue.record("hci:7 opened")
        } catch {
            #if os(Linux)
            if error.kind == .unsupported {
                #expect(error.message == "hci:7: kernel has no Bluetooth: use tcp: or tty:")
            } else {
                #expect(error.kind == .open)
                #expect(error.message.hasPrefix("hci:7: "))
            }
            #else
            #expect(error.kind == .unsupported)
            #expect(error.message.contains("not supported on this platform"))
            #endif
        }
    }

    @Test func errnoMessages() {
        #if os(Linux)
        #expect(UserChannel.socketError(EAFNOSUPPORT, name: "hci:0").message == "hci:0: kernel has no Bluetooth: use tcp: or tty:")
        #expect(UserChannel.socketError(EAFNOSUPPORT, name: "hci:0").kind == .unsupported)
        #expect(UserChannel.bindError(ENODEV, name: "hci:4", device: 4).message == "hci:4: no controller hci4")
        #expect(UserChannel.bindError(EBUSY, name: "hci:0", device: 0).message.contains("power it off"))
        #expect(UserChannel.bindError(EPERM, name: "hci:0", device: 0).message.contains("CAP_NET_ADMIN"))
        #endif
    }
}

/// Real kernel objects (TCP on 127.0.0.1, a pty pair): both ends in this process.
@Suite struct StreamTransportTests {
    static let reset = H4Packet(.command, [0x03, 0x0C, 0x00])
    static let resetComplete = H4Packet(.event, [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])

    @Test func tcpExchangesPacketsAndReportsDisconnection() throws {
        let listener = try Transports.listen(.tcp(host: "127.0.0.1", port: 0))
        defer { listener.close() }
        let uri = try TransportURI(listener.address)
        let host = try Transports.open(uri, timeout: 2)
        let controller = try listener.accept(timeout: 2)
        defer { controller.close() }
        try host.send(Self.reset)
        #expect(try controller.receive(timeout: 2) == Self.reset)
        try controller.send(Self.resetComplete)
        #expect(try host.receive(timeout: 2) == Self.resetComplete)
        let start = Date()
        #expect(try host.receive(timeout: 0.2) == nil)
        #expect(Date().timeIntervalSince(start) < 1.5)
        host.close()
        #expect(throws: TransportError(.disconnected, "")) { _ = try controller.receive(timeout: 2) }
    }

    @Test func tcpConnectionRefusedIsAnOpenError() throws {
        let port = try ReplayEnvironment.freePort()
        #expect(throws: TransportError(.open, "")) { try Transports.open(.tcp(host: "127.0.0.1", port: port), timeout: 2) }
    }

    @Test func acceptTimesOut() throws {
        let listener = try Transports.listen(.tcp(host: "127.0.0.1", port: 0))
        defer { listener.close() }
        #expect(throws: TransportError(.timeout, "")) { try listener.accept(timeout: 0.2) }
    }

    @Test func ptyListenerAndTTYTransport() throws {
        let dir = try ReplayEnvironment.temporaryDirectory("pty")
        let link = dir.appendingPathComponent("hci").path
        let listener = try Transports.listen(.pty(link: link))
        #expect(listener.address.hasPrefix("pty:/dev/pts/"))
        #expect(listener.address.hasSuffix("(linked at \(link))"))
        let controllerSide = try listener.accept(timeout: 1)
        let host = try Transports.open(.tty(path: link, baud: 115_200, rtscts: false))
        try host.send(Self.reset)
        #expect(try controllerSide.receive(timeout: 2) == Self.reset)
        try controllerSide.send(Self.resetComplete)
        #expect(try host.receive(timeout: 2) == Self.resetComplete)
        host.close()
        #expect(throws: TransportError(.disconnected, "")) { _ = try controllerSide.receive(timeout: 2) }
        controllerSide.close()
        listener.close()
        #expect(!FileManager.default.fileExists(atPath: link))
    }

    @Test func ttyThatIsNotATerminalIsRefused() throws {
        let dir = try ReplayEnvironment.temporaryDirectory("notatty")
        let file = dir.appendingPathComponent("plain")
        try Data([1, 2, 3]).write(to: file)
        #expect(throws: TransportError(.open, "")) { try Transports.open(.tty(path: file.path, baud: 115_200, rtscts: false)) }
        #expect(throws: TransportError(.open, "")) { try Transports.open(.tty(path: dir.appendingPathComponent("absent").path, baud: 9600, rtscts: false)) }
    }
}
