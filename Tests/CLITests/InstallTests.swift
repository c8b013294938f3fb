import TestSupport
import Foundation
import Testing

/// `make install` of the static release binary, checked by `make install-check`'s script: installed
/// under a temporary DESTDIR, run with an empty environment (no Swift on PATH or LD_LIBRARY_PATH),
/// ldd showing no Swift library, the frame count right from a file and from a pipe, then
/// `make uninstall`. The release build takes minutes, so this test uses one that exists
/// (`make static`) and is skipped without it.
@Suite struct InstallTests {
    static let staticBinary = Repo.root.appendingPathComponent(".build-static/release/bleanalyze").path

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: staticBinary), "no static release build: `make static` (minutes) enables this test"),
          .enabled(if: Tool.available("ldd", ["--version"]) && Tool.available("make", ["--version"]), "needs ldd and make (Linux)"))
    func installedBinaryRunsWithoutSwift() throws {
        let (status, text) = try Tool.outcome(URL(fileURLWithPath: "/bin/bash"),
                                              [Repo.root.appendingPathComponent("scripts/install-check.sh").path], in: Repo.root)
        #expect(status == 0, "\(text)")
        #expect(text.contains("install-check: OK"), "\(text)")
        #expect(text.contains("libpcap"), "libpcap stays a shared library: \(text)")
    }
}

/// `make dist`'s Debian package, built from the static release binary into a temporary directory,
/// unpacked with `dpkg-deb -x` and run with Swift out of reach (an empty environment, PATH=/usr/bin:/bin):
/// `--version` names the version and a commit of this repository, the man page renders, the bash
/// completion registers and completes, and a report reads captures/healthy.btsnoop with every frame
/// counted. Its Depends must name, for every library the binary NEEDs, a package that ships that file
/// (asked here of dpkg by file name, not the way make-dist.sh resolves it).
@Suite struct DistTests {
    static let staticBinary = InstallTests.staticBinary

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: staticBinary), "no static release build: `make static` (minutes) enables this test"),
          .enabled(if: Tool.available("dpkg-deb", ["--version"]) && Tool.available("readelf", ["--version"]) && Tool.available("make", ["--version"]),
                   "needs dpkg-deb, readelf and make (Debian)"))
    func debianPackageRunsWithoutSwift() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("bleanalyze-dist-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let made = try Tool.outcome(URL(fileURLWithPath: "/usr/bin/env"),
                                    ["make", "--no-print-directory", "-o", ".build-static/release/bleanalyze", "dist", "DIST_DIR=\(scratch.path)"],
                                    in: Repo.root)
        try #require(made.status == 0, "\(made.output)")
        let files = try FileManager.default.contentsOfDirectory(atPath: scratch.path)
        let deb = try #require(files.first { $0.hasPrefix("bleanalyze_") && $0.hasSuffix(".deb") }, "no .deb in \(files)")
        #expect(files.contains { $0.hasPrefix("bleanalyze-") && $0.hasSuffix(".tar.gz") }, "no tarball in \(files)")
        let debPath = scratch.appendingPathComponent(deb).path
        let root = scratch.appendingPathComponent("root")
        try #require(Tool.run("dpkg-deb", ["-x", debPath, root.path]) != nil)
        let bin = root.appendingPathComponent("usr/bin/bleanalyze").path

        // Depends: each NEEDED soname is shipped by one of the packages named.
        let depends = Set((Tool.run("dpkg-deb", ["-f", debPath, "Depends"]) ?? "")
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) })
        let needed = (Tool.run("readelf", ["-d", bin]) ?? "").split(separator: "\n")
            .filter { $0.contains("(NEEDED)") }
            .compactMap { line in line.split(separator: "[").last?.split(separator: "]").first.map(String.init) }
        #expect(needed.contains("libpcap.so.0.8"), "libpcap stays shared: \(needed)")
        for soname in needed {
            let owners = (Tool.run("dpkg", ["-S", "*/\(soname)"]) ?? "").split(separator: "\n")
                .compactMap { $0.split(separator: ":").first.map(String.init) }
            #expect(!Set(owners).isDisjoint(with: depends), "\(soname) comes from \(owners), Depends is \(depends.sorted())")
        }

        let empty = ["-i", "PATH=/usr/bin:/bin"]
        let env = URL(fileURLWithPath: "/usr/bin/env")
        // --version: the version in ReportText.swift (ToolVersion) and a commit git knows.
        let version = try Tool.outcome(env, empty + [bin, "--version"])
        #expect(version.status == 0, "\(version.output)")
        let source = try String(contentsOf: Repo.root.appendingPathComponent("Sources/BLEReport/ReportText.swift"), encoding: .utf8)
        let declared = try #require(source.firstMatch(of: /public static let current = "([^"]+)"/)?.1)
        #expect(version.output.hasPrefix("\(declared) (commit "), "\(version.output)")
        let commit = try #require(version.output.firstMatch(of: /\(commit ([0-9a-f]{7,40})(-dirty)?\)/)?.1, "no commit: \(version.output)")
        #expect(Tool.run("git", ["-C", Repo.root.path, "cat-file", "-e", "\(commit)^{commit}"]) != nil, "\(commit) is not a commit here")

        // The man pages: one per command, rendered by man (or groff) at 80 columns.
        let man1 = root.appendingPathComponent("usr/share/man/man1")
        let pages = try FileManager.default.contentsOfDirectory(atPath: man1.path)
        #expect(pages.contains("bleanalyze.1.gz") && pages.contains("bleanalyze-report.1.gz"), "\(pages)")
        if Tool.available("man", ["--version"]) {
            let page = try Tool.outcome(env, empty + ["MANWIDTH=80", "man", "-l", man1.appendingPathComponent("bleanalyze-report.1.gz").path])
            #expect(page.status == 0 && page.output.contains("NAME") && page.output.contains("--json"), "\(page.output)")
        }

        // bash: the completion registers for bleanalyze and completes a subcommand.
        let completion = root.appendingPathComponent("usr/share/bash-completion/completions/bleanalyze").path
        let script = "source '\(completion)' && complete -p bleanalyze && COMP_WORDS=(bleanalyze rep) COMP_CWORD=1 && _bleanalyze bleanalyze rep bleanalyze && printf '%s\\n' \"${COMPREPLY[@]}\""
        let bash = try Tool.outcome(env, empty + ["bash", "--norc", "-c", script])
        #expect(bash.status == 0 && bash.output.contains("-F _bleanalyze bleanalyze"), "\(bash.output)")
        #expect(bash.output.split(separator: "\n").contains("report"), "\(bash.output)")
        for path in ["usr/share/zsh/site-functions/_bleanalyze", "usr/share/fish/vendor_completions.d/bleanalyze.fish"] {
            #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path), "\(path) missing")
        }

        // A report, every record of the btsnoop file counted (16-byte header, 24-byte record headers).
        let capture = Repo.root.appendingPathComponent("captures/healthy.btsnoop")
        let bytes = [UInt8](try Data(contentsOf: capture))
        var at = 16, records = 0
        while at + 24 <= bytes.count {
            let length = bytes[at + 4 ..< at + 8].reduce(0) { $0 << 8 | Int($1) }
            at += 24 + length
            if at <= bytes.count { records += 1 }
        }
        let report = try Tool.outcome(env, empty + [bin, capture.path])
        #expect(report.status == 0 && report.output.contains("btsnoop") && report.output.contains("\(records) frames"), "\(report.output)")
    }
}
