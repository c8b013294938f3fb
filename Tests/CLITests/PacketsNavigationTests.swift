import Foundation
import Testing

/// From a finding to its frames: `packets --frame N`, `--frames A-B`, `--context K`, `--conn` by the
/// connection's number in the report, handle or address; `timeline --conn`; and a clear error (exit 2)
/// for a filter that cannot match instead of an empty output and exit 0.
@Suite struct PacketsNavigationTests {
    func numbers(_ args: [String]) throws -> [Int] {
        let r = try CLI.run(["packets"] + args + ["--json"])
        #expect(r.status == 0, "\(args): \(r.stderr)")
        return r.stdout.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["frame"] as? Int
        }
    }

    @Test func frameSelectionWithContext() throws {
        let healthy = CLI.capture("healthy.btsnoop")
        #expect(try numbers([healthy, "--frame", "40"]) == [40])
        #expect(try numbers([healthy, "--frame", "40", "--context", "2"]) == [38, 39, 40, 41, 42])
        #expect(try numbers([healthy, "--frames", "10-14"]) == [10, 11, 12, 13, 14])
        // Two selections whose contexts overlap print each frame once, in order.
        #expect(try numbers([healthy, "--frame", "20", "--frame", "22", "--context", "1"]) == [19, 20, 21, 22, 23])
        #expect(try numbers([healthy, "--frame", "1", "--context", "3"]) == [1, 2, 3, 4])
    }

    @Test func connectionByNumberHandleOrAddress() throws {
        // idle_connection: connection 1 to :02 (handle 1), connection 2 to :03 (handle 2).
        let capture = CLI.capture("idle_connection.btsnoop")
        let timeline = try CLI.json(try CLI.run(["timeline", capture, "--json"]).stdout)
        let conns = try #require(timeline["connections"] as? [[String: Any]])
        try #require(conns.count == 2)
        let handle = try #require(conns[1]["handle"] as? Int)
        let peer = try #require(conns[1]["peer"] as? String)
        let byNumber = try numbers([capture, "--conn", "2", "--att"])
        let byHandle = try numbers([capture, "--conn", "0x" + String(handle, radix: 16), "--att"])
        let byAddress = try numbers([capture, "--conn", peer, "--att"])
        #expect(!byNumber.isEmpty)
        #expect(byNumber == byHandle && byHandle == byAddress)
        let first = try numbers([capture, "--conn", "1", "--att"])
        #expect(Set(first).isDisjoint(with: byNumber))
    }

    @Test func filtersThatCannotMatchAreErrors() throws {
        let healthy = CLI.capture("healthy.btsnoop")
        let noConnection = try CLI.run(["packets", healthy, "--conn", "9"])
        #expect(noConnection.status == 2)
        #expect(noConnection.stderr.contains("there is no connection 9"), "\(noConnection.stderr)")
        let emptyRange = try CLI.run(["packets", healthy, "--since", "10", "--until", "5"])
        #expect(emptyRange.status == 2)
        #expect(emptyRange.stderr.contains("time range is empty"), "\(emptyRange.stderr)")
        let pastTheEnd = try CLI.run(["packets", healthy, "--frames", "100000-100010"])
        #expect(pastTheEnd.status == 2)
        #expect(pastTheEnd.stderr.contains("frames"), "\(pastTheEnd.stderr)")
        #expect(try CLI.run(["packets", healthy, "--context", "2"]).status == 2, "--context needs --frame")
        #expect(try CLI.run(["timeline", healthy, "--conn", "3"]).status == 2)
    }

    @Test func timelineOfOneConnection() throws {
        let capture = CLI.capture("idle_connection.btsnoop")
        let one = try CLI.json(try CLI.run(["timeline", capture, "--conn", "2", "--json"]).stdout)
        let conns = try #require(one["connections"] as? [[String: Any]])
        #expect(conns.count == 1)
        #expect(conns.first?["index"] as? Int == 2)
        let text = try CLI.run(["timeline", capture, "--conn", "2"]).stdout
        #expect(text.hasPrefix("Connection 2:"))
        #expect(!text.contains("Connection 1:"))
    }
}
