import Foundation
public import Testing

/// The heavy tiers of the suite, as tags: each names what its tests need beyond Swift, and what they cost.
///
/// `swift test` runs every tier that can run on the machine; `MAPCLUSTER_SKIP` leaves tiers out by name
/// (`MAPCLUSTER_SKIP=browser,million,crash swift test`), and `--filter` picks suites as usual.
extension Tag {
    /// Chromium driven through Playwright: the web maps as a user sees them.
    @Tag public static var browser: Self
    /// `mapcluster` and its servers as child processes, over real sockets.
    @Tag public static var processes: Self
    /// A PostgreSQL server (`MAPCLUSTER_POSTGRES_URL`) and a build with the `PostgreSQL` trait.
    @Tag public static var postgres: Self
    /// A million points, loaded and served: the slowest tests but the crash test.
    @Tag public static var million: Self
    /// Servers killed with SIGKILL while they take edits, and what they kept.
    @Tag public static var crash: Self
}

/// The tiers `MAPCLUSTER_SKIP` names.
public enum Tiers {
    /// The tags' names in `MAPCLUSTER_SKIP`, comma-separated.
    public static let skipped: Set<String> = Set(
        (ProcessInfo.processInfo.environment["MAPCLUSTER_SKIP"] ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        })

    /// Whether the tier of `tag` is left out.
    public static func isSkipped(_ tag: Tag) -> Bool {
        skipped.contains(name(of: tag))
    }

    /// A tag's name, as `MAPCLUSTER_SKIP` spells it (its description has a leading dot: ".browser").
    public static func name(of tag: Tag) -> String {
        String(String(describing: tag).drop { $0 == "." })
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test or suite unless `MAPCLUSTER_SKIP` names its tier.
    public static func tier(_ tag: Tag) -> Self {
        .disabled(if: Tiers.isSkipped(tag), "MAPCLUSTER_SKIP leaves out the \(Tiers.name(of: tag)) tier")
    }
}
