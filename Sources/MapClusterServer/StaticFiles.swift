import Foundation
import Hummingbird
import MapClusterIO
import NIOCore

/// The files the web page needs, read once when the server starts: the page itself, the basemap, and Leaflet's files
/// from Debian's `libjs-leaflet` when it is installed.
///
/// Paths are looked up in a table, never joined to a directory, so no request can reach another file.
struct StaticFiles: Sendable {
    struct File: Sendable {
        let bytes: ByteBuffer
        /// The bytes in gzip, compressed once; `nil` for a file too small to gain from it.
        let gzipped: ByteBuffer?
        let type: String
    }

    private var files: [String: File] = [:]
    /// The paths of the bundled pages, style sheets and modules, and of the basemap.
    private(set) var pagePaths: [String] = []
    /// Whether Leaflet's files were found locally; without them, `/leaflet/…` redirects to the CDN.
    private(set) var hasLocalLeaflet = false
    /// Whether MapLibre GL JS was found locally; without it, `/maplibre/…` redirects to the CDN.
    private(set) var hasLocalMapLibre = false

    /// Reads the bundled pages and basemap, every file under `leafletDirectory`, and MapLibre GL JS's script and
    /// style sheet from `mapLibreDirectory`.
    init(leafletDirectory: String, mapLibreDirectory: String?) throws {
        // Every page, style sheet and module of the bundled folder, by name: `index.html` at `/`.
        guard let folder = Bundle.module.url(forResource: "Public", withExtension: nil) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "Public"])
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        for name in names.sorted() where ["html", "js", "css"].contains((name as NSString).pathExtension) {
            let path = "/" + (name == "index.html" ? "" : name)
            try add(path, url: folder.appendingPathComponent(name))
            pagePaths.append(path)
        }
        try add("/basemap.geojson", url: SampleData.worldOutlineURL)
        pagePaths.append("/basemap.geojson")
        let leaflet = URL(fileURLWithPath: leafletDirectory, isDirectory: true)
        if let walker = FileManager.default.enumerator(at: leaflet, includingPropertiesForKeys: [.isRegularFileKey]) {
            let root = leaflet.resolvingSymlinksInPath().path
            for case let url as URL in walker
            where (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true {
                let relative = url.resolvingSymlinksInPath().path.dropFirst(root.count)
                try add("/leaflet" + (relative.hasPrefix("/") ? relative : "/" + relative), url: url)
                hasLocalLeaflet = true
            }
        }
        if let mapLibreDirectory {
            // Only the two files the page loads: the Python package's folder holds others.
            for name in ["maplibre-gl.js", "maplibre-gl.css"] {
                try add("/maplibre/\(name)", url: URL(fileURLWithPath: mapLibreDirectory).appendingPathComponent(name))
            }
            hasLocalMapLibre = true
        }
    }

    private mutating func add(_ path: String, url: URL) throws {
        let bytes = ByteBuffer(bytes: try Data(contentsOf: url))
        files[path] = File(bytes: bytes, gzipped: Compression.gzip(bytes), type: Self.type(of: url.pathExtension))
    }

    /// The file served at a path, if any.
    subscript(path: String) -> File? { files[path] }

    static func type(of fileExtension: String) -> String {
        switch fileExtension {
        case "html": "text/html; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "geojson": "application/geo+json"
        case "png": "image/png"
        case "svg": "image/svg+xml"
        default: "application/octet-stream"
        }
    }
}
