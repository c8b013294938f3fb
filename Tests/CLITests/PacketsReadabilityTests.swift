import TestSupport
import Foundation
import Testing

/// `packets -t` (seconds since the capture's first frame, title lines within 80 columns) and
/// `--color` (direction colours on a terminal, never in a pipe unless asked).
@Suite struct PacketsReadabilityTests {
    /// The record timestamps of a btsnoop file, read here from the bytes (µs; 16-byte file header,
    /// then per record a 24-byte header whose last 8 bytes are the big-endian timestamp).
    static func btsnoopTimestamps(_ path: String) throws -> [Int64] {
        let b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        func be(_ at: Int, _ n: Int) -> UInt64 { b[at ..< at + n].reduce(0) { $0 << 8 | UInt64($1) } }
        var times: [Int64] = []
        var at = 16
        while at + 24 <= b.count {
            let included = Int(be(at + 4, 4))
            guard at + 24 + included <= b.count else { break }
            times.append(Int64(bitPattern: be(at + 16, 8)))
            at += 24 + included
        }
        return times
    }

    /// Title lines: the ones that do not start with a space. Returns (frame number, time text, line).
    static func titles(_ text: String) -> [(frame: Int, time: String, line: Substring)] {
        text.split(separator: "\n").compactMap { line in
            guard let first = line.first, first != " " else { return nil }
            let words = line.split(separator: " ")
            guard words.count >= 3, let hash = words.dropLast().last(where: { $0.hasPrefix("#") }),
                  let n = Int(hash.dropFirst()) else { return nil }
            return (n, String(words.last!), line)
        }
    }

    static func seconds(_ micros: Int64) -> String {
        String(format: "%@%lld.%06lld", micros < 0 ? "-" : "", abs(micros) / 1_000_000, abs(micros) % 1_000_000)
    }

    static var treadmill: String? { CLI.sharedReal?.appendingPathComponent("android_horizon_treadmill_notify.btsnoop").path }

    /// Every frame's time is its timestamp minus the first frame's, as the file's bytes give them.
    @Test(arguments: ["healthy.btsnoop", "flow_stall.btsnoop"])
    func relativeTimesAreSecondsSinceTheFirstFrame(_ name: String) throws {
        let path = CLI.capture(name)
        let stamps = try Self.btsnoopTimestamps(path)
        let r = try CLI.run(["packets", path, "-t"])
        #expect(r.status == 0, "\(r.stderr)")
        let titles = Self.titles(r.stdout)
        #expect(titles.count == stamps.count)
        #expect(titles.first?.time == "0.000000")
        for t in titles {
            #expect(t.time == Self.seconds(stamps[t.frame - 1] - stamps[0]), "frame \(t.frame)")
        }
        // --relative is the long spelling; --frames keeps the capture's origin, not the first frame printed.
        let some = try CLI.run(["packets", path, "--relative", "--frames", "20-22"])
        #expect(Self.titles(some.stdout).map(\.time) == (20 ... 22).map { Self.seconds(stamps[$0 - 1] - stamps[0]) })
    }

    /// Without a terminal, relative title lines end at column 79, as btmon's do (`#12 0.003372`, the
    /// adapter only when not hci0). A title too long for that loses the end of its name to `..`, as
    /// btmon's do, and keeps the rest: the same line starts the frame in the default output.
    @Test(.enabled(if: treadmill != nil, "../shared/captures/real is absent"))
    func relativeTitleLinesFitEightyColumns() throws {
        for path in [CLI.capture("healthy.btsnoop"), try #require(Self.treadmill)] {
            let relative = Self.titles(try CLI.run(["packets", path, "-t"]).stdout)
            let full = Dictionary(uniqueKeysWithValues: Self.titles(try CLI.run(["packets", path]).stdout).map { ($0.frame, $0.line) })
            #expect(!relative.isEmpty && relative.count == full.count)
            var cut = 0
            for t in relative {
                #expect(t.line.count <= 79, "\(t.line)")
                #expect(t.line.hasSuffix("  #\(t.frame) \(t.time)") || t.line.contains("  #\(t.frame) [hci"), "\(t.line)")
                let blockStart = try #require(t.line.range(of: "  #\(t.frame) ")).lowerBound
                let title = t.line[..<blockStart].trimmingCharacters(in: .whitespaces)
                let original = try #require(full[t.frame])
                if let dots = title.range(of: "..") {   // the name's end is cut, the code and length stay
                    cut += 1
                    #expect(original.hasPrefix(title[..<dots.lowerBound]), "\(t.line)")
                    #expect(original.contains(title[dots.upperBound...]), "\(t.line)")
                } else {
                    #expect(original.hasPrefix(title + "  "), "\(t.line)")
                }
            }
            if path.hasSuffix("treadmill_notify.btsnoop") {
                #expect(cut > 0, "long HCI command names (LE Set Extended Scan Parameters) are cut")
            }
        }
    }

    /// Colour only when asked (a pipe is not a terminal); the coloured text is the plain text plus
    /// escape codes; sent frames are blue, received ones magenta.
    @Test func colourByDirectionOnlyWhenAsked() throws {
        let path = CLI.capture("healthy.btsnoop")
        let plain = try CLI.run(["packets", path, "-t"])
        #expect(!plain.stdout.contains("\u{1B}"))
        let auto = try CLI.run(["packets", path, "-t", "--color", "auto"])
        #expect(auto.stdout == plain.stdout)
        let coloured = try CLI.run(["packets", path, "-t", "--color", "always"])
        #expect(coloured.status == 0)
        let stripped = coloured.stdout.replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression)
        #expect(stripped == plain.stdout)
        let lines = coloured.stdout.split(separator: "\n")
        let sent = lines.filter { $0.hasPrefix("\u{1B}[0;34m<") }.count
        let received = lines.filter { $0.hasPrefix("\u{1B}[0;35m>") }.count
        #expect(sent == plain.stdout.split(separator: "\n").filter { $0.hasPrefix("<") }.count)
        #expect(received == plain.stdout.split(separator: "\n").filter { $0.hasPrefix(">") }.count)
        #expect(sent > 0 && received > 0)
        let bad = try CLI.run(["packets", path, "--color", "sometimes"])
        #expect(bad.status == 2)
    }
}
