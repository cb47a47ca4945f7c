import Foundation
import Hummingbird
import MapClusterIO
import MapClusterSampleData
import NIOCore

/// The files the web pages need, read once when the server starts: the pages and their modules, the basemap, Leaflet's
/// files from Debian's `libjs-leaflet` when it is installed, and MapLibre GL JS's from a local copy when there is one.
///
/// Paths are looked up in a table, never joined to a directory, so no request can reach another file.
package struct PageFiles: Sendable {
    /// Where the page loads Leaflet from when the Debian package `libjs-leaflet` is not installed.
    package static let leafletCDN = "https://unpkg.com/leaflet@1.9.4/dist"
    /// Where Debian's `libjs-leaflet` puts Leaflet.
    package static let localLeaflet = "/usr/share/javascript/leaflet"
    /// Where the MapLibre page loads MapLibre GL JS from when no local copy is found.
    package static let mapLibreCDN = "https://unpkg.com/maplibre-gl@5.3.0/dist"

    struct File: Sendable {
        let bytes: ByteBuffer
        /// The bytes in gzip, compressed once; `nil` for a file too small to gain from it.
        let gzipped: ByteBuffer?
        let type: String
        /// A validator of the bytes (`W/"…"`, quotes included): a client that has them asks with
        /// `If-None-Match` and is answered 304 without them.
        let entityTag: String
    }

    private var files: [String: File] = [:]
    /// The paths of the bundled pages, style sheets and modules, and of the basemap.
    package private(set) var pagePaths: [String] = []
    /// Whether Leaflet's files were found locally; without them, `/leaflet/…` redirects to the CDN.
    private(set) var hasLocalLeaflet = false
    /// Whether MapLibre GL JS was found locally; without it, `/maplibre/…` redirects to the CDN.
    private(set) var hasLocalMapLibre = false

    /// Reads the bundled pages and basemap, every file under `leafletDirectory`, and MapLibre GL JS's script and
    /// style sheet from `mapLibreDirectory`.
    ///
    /// - Throws: An error if a bundled file or a local copy can't be read.
    package init(leafletDirectory: String = localLeaflet, mapLibreDirectory: String? = Self.localMapLibre()) throws {
        // Every page, style sheet and module of the bundled folder, by name: `index.html` at `/`.
        guard let folder = Bundle.module.url(forResource: "Public", withExtension: nil) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "Public"])
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        for name in names.sorted() where ["html", "js", "css"].contains((name as NSString).pathExtension) {
            // index.html at `/`, the API reference (docs.html) at `/docs`.
            let path = "/" + (name == "index.html" ? "" : name == "docs.html" ? "docs" : name)
            try add(path, url: folder.appendingPathComponent(name))
            pagePaths.append(path)
        }
        try add("/basemap.geojson", url: SampleData.worldOutlineURL)
        pagePaths.append("/basemap.geojson")
        // The API's OpenAPI document, its one description (Tests: OpenAPITests, and schemathesis in .ci/run).
        guard let openAPI = Bundle.module.url(forResource: "openapi", withExtension: "json") else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "openapi.json"])
        }
        try add("/openapi.json", url: openAPI)
        pagePaths.append("/openapi.json")
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
        let data = try Data(contentsOf: url)
        let bytes = ByteBuffer(bytes: data)
        files[path] = File(
            bytes: bytes, gzipped: Compression.gzip(bytes), type: Self.type(of: url.pathExtension),
            entityTag: Self.entityTag(of: data))
    }

    /// The file served at a path, if any.
    subscript(path: String) -> File? { files[path] }

    /// A 64-bit FNV-1a hash of the bytes and their count, in hexadecimal and quotes.
    ///
    /// The files never change while the server runs, so a hash made once at start names their version. It is weak
    /// (`W/`): the same file gzipped or not.
    static func entityTag(of data: Data) -> String {
        var hash = StableHash()
        hash.add(data)
        return "W/\"\(String(hash.value, radix: 16))-\(String(data.count, radix: 16))\""
    }

    static func type(of fileExtension: String) -> String {
        switch fileExtension {
        case "html": "text/html; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "geojson": "application/geo+json"
        case "json": "application/json"
        case "png": "image/png"
        case "svg": "image/svg+xml"
        default: "application/octet-stream"
        }
    }
}
