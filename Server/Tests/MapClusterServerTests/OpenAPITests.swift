import Foundation
import Hummingbird
import MapClusterServer
import Testing

/// The OpenAPI document (`/openapi.json`) is the API's one description.
///
/// Every route the server has is in it with its methods, and nothing else is. Schemathesis, in .ci/run, checks the
/// answers against it.
struct OpenAPITests {
    @Test func theDocumentDescribesEveryRouteAndOnlyThem() async throws {
        let files = try PageFiles()
        let router = buildRouter(points: ServedPoints(), writable: true, files: files, metrics: ServerMetrics())
        // The pages' files and Leaflet's and MapLibre's are files, not the API; the document is both.
        let pages = Set(files.pagePaths).subtracting(["/openapi.json"])
        let served = Set(
            router.routes.filter { $0.method != .head }.compactMap { route -> String? in
                let path = "\(route.path)".split(separator: "/").map { segment in
                    segment.hasPrefix(":") ? "{\(segment.dropFirst())}" : String(segment)
                }.joined(separator: "/")
                let absolute = "/" + path
                guard !pages.contains(absolute), !absolute.hasPrefix("/leaflet/"), !absolute.hasPrefix("/maplibre/")
                else { return nil }
                return "\(route.method.rawValue) \(absolute)"
            })

        let client = RouterClient(router)
        let document = try await client.execute(uri: "/openapi.json", method: .get) { response in
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/json")
            return try #require(
                try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any])
        }
        #expect(document["openapi"] as? String == "3.1.0")
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let documented = Set(
            paths.flatMap { path, operations in
                operations.keys.filter { ["get", "post", "delete", "put", "patch"].contains($0) }.map {
                    "\($0.uppercased()) \(path)"
                }
            })
        #expect(
            served.subtracting(documented).isEmpty,
            "routes the document lacks: \(served.subtracting(documented).sorted())")
        #expect(
            documented.subtracting(served).isEmpty, "documented, not served: \(documented.subtracting(served).sorted())"
        )
        #expect(served.count >= 17)
    }
}
