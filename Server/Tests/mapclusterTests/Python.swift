import Foundation
import Testing

/// The Python that runs the tests' scripts, and whether it has the packages a script imports.
///
/// The Python is `MAPCLUSTER_PYTHON`, else a `.venv` at the application's root or the repository's, else `python3` on
/// the path. A package counts as installed when that Python imports it: a test whose script needs one it lacks is
/// skipped with the line that installs it, unless `MAPCLUSTER_REQUIRE_BROWSER=1` asks for every tier, as `.ci/run`
/// does (then a missing package fails the test that needs it).
enum Python {
    static let executable: String? = {
        if let path = ProcessInfo.processInfo.environment["MAPCLUSTER_PYTHON"] { return path }
        let application = WebMapTests.root
        for venv in [application, application.deletingLastPathComponent()] {
            let python = venv.appendingPathComponent(".venv/bin/python").path
            if FileManager.default.isExecutableFile(atPath: python) { return python }
        }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/python3" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }()

    /// Whether the Python imports every one of `modules` (module names, as `import` spells them).
    static func imports(_ modules: String...) -> Bool {
        guard let executable else { return false }
        let run = try? CommandLineTests.run(
            URL(fileURLWithPath: executable), ["-c", modules.map { "import \($0)" }.joined(separator: "; ")])
        return run?.status == 0
    }

    static let hasPlaywright = imports("playwright.sync_api")
    /// The folder of MapLibre GL JS that the Python's `maplibre` package carries; `nil` without the package.
    static let mapLibre: String? = {
        guard let executable else { return nil }
        let script = "import maplibre, os; print(os.path.join(os.path.dirname(maplibre.__file__), 'srcjs'))"
        guard let run = try? CommandLineTests.run(URL(fileURLWithPath: executable), ["-c", script]), run.status == 0
        else { return nil }
        let folder = run.output.trimmingCharacters(in: .whitespacesAndNewlines)
        return FileManager.default.fileExists(atPath: folder + "/maplibre-gl.js") ? folder : nil
    }()
    static let hasTileReaders = imports("mapbox_vector_tile", "pmtiles.reader")
    static let hasPrometheusClient = imports("prometheus_client.parser")
    static let hasAxe = imports("axe_playwright_python.sync_playwright")

    /// Runs a browser test that checks pages with axe-core where the package imports (or every tier is asked for).
    static var axe: ConditionTrait {
        .enabled(
            if: (hasAxe && WebMapTests.enabled) || ServeAndRenderTests.browserRequired,
            needs("playwright", "axe-playwright-python"))
    }

    /// Runs a test whose script reads tiles with mapbox-vector-tile and pmtiles where they import (or every tier is
    /// asked for).
    static var tileReaders: ConditionTrait {
        .enabled(
            if: hasTileReaders || ServeAndRenderTests.browserRequired, needs("mapbox-vector-tile", "pmtiles"))
    }

    /// What a skipped test needs installed: the pip line of the packages (PyPI names).
    static func needs(_ packages: String...) -> Comment {
        """
        needs Python with \(packages.joined(separator: ", ")): python3 -m venv .venv && \
        .venv/bin/pip install \(packages.joined(separator: " "))
        """
    }
}
