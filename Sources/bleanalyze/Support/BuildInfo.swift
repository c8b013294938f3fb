import BLEReport

/// What `bleanalyze --version` prints: the version (`ToolVersion.current`, the one place it lives; the
/// Makefile reads it for `make dist`) and the commit the binary was built from.
///
/// The commit comes from `BuildInfo.generated.swift`, which `make static`/`make release` write from
/// `git describe --always --dirty` and compile with `-D BLEANALYZE_BUILDINFO` (the file is gitignored,
/// so a build never dirties the tree). A plain `swift build` ignores that file and says `unknown`.
enum BuildInfo {
    static var versionLine: String { "\(ToolVersion.current) (commit \(commit))" }
}

#if !BLEANALYZE_BUILDINFO
extension BuildInfo {
    static let commit = "unknown"
}
#endif
