import Foundation
import Testing

/// The server's vector tiles read by a decoder nobody here wrote.
///
/// The decoder is the PyPI package `mapbox-vector-tile`, driven by Tests/tools/check_tiles.py. Needs Python with it (`MAPCLUSTER_PYTHON` or `.venv`, as the browser tests);
/// `.ci/run` installs it and asks for this test with `MAPCLUSTER_REQUIRE_BROWSER=1`.
struct TileReaderTests {
    @Test(.enabled(if: WebMapTests.python != nil || ServeAndRenderTests.browserRequired, "needs mapbox-vector-tile"))
    func everyTileDecodesAndEachZoomHoldsEveryPointOnce() throws {
        let server = try ServeAndRenderTests.Server()
        defer { _ = server.process.isRunning ? kill(server.process.processIdentifier, SIGTERM) : 0 }
        let data = try WebMapTests.runScript("Tests/tools/check_tiles.py", ["http://127.0.0.1:\(server.port)/", "5"])
        let zooms = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        #expect(zooms.count == 6)
        for zoom in zooms {
            let z = zoom["z"] as? Int ?? -1
            #expect(zoom["tiles"] as? Int == 1 << (2 * z))
            #expect(zoom["points"] as? Int == 34_006, "zoom \(z)")
            #expect(zoom["content_types"] as? [String] == ["application/vnd.mapbox-vector-tile"])
        }
        // Oceans and poles: some tiles of the deeper zooms are empty, and answered 204.
        #expect((zooms.last?["empty"] as? Int ?? 0) > 0)
    }
}
