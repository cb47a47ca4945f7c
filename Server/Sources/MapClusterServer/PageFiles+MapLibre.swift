import Foundation

extension PageFiles {
    /// Where a local copy of MapLibre GL JS 5 is: `MAPCLUSTER_MAPLIBRE`, or the `maplibre` Python package's
    /// `srcjs` folder in `./.venv` or the system's Python packages; `nil` if there is none.
    package static func localMapLibre() -> String? {
        var candidates: [String] = []
        if let path = ProcessInfo.processInfo.environment["MAPCLUSTER_MAPLIBRE"] { candidates.append(path) }
        let home = FileManager.default.homeDirectoryForCurrentUser.path
        for libraries in [".venv/lib", "\(home)/.local/lib", "/usr/local/lib", "/usr/lib"] {
            let versions = (try? FileManager.default.contentsOfDirectory(atPath: libraries)) ?? []
            for version in versions.sorted().reversed() where version.hasPrefix("python3") {
                for packages in ["site-packages", "dist-packages"] {
                    candidates.append("\(libraries)/\(version)/\(packages)/maplibre/srcjs")
                }
            }
        }
        return candidates.first { FileManager.default.fileExists(atPath: "\($0)/maplibre-gl.js") }
    }
}
