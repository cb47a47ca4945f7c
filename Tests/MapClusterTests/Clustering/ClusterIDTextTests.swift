import Foundation
import MapClusterTestSupport
import Testing

@testable import MapCluster

/// The cluster-id grammar against the test vectors the page's own tests read too (Tests/vectors/cluster-ids.json).
struct ClusterIDTextTests {
    /// What a vector says an id decodes to.
    indirect enum Expected: Decodable, Hashable {
        case cell(level: Int, x: UInt32, y: UInt32)
        case location(latitude: Double, longitude: Double)
        case point(record: Int)
        case filtered(categories: String, of: Expected)
        case merged([Expected])

        enum Key: String, CodingKey { case kind, level, x, y, latitude, longitude, record, categories, of, parts }

        init(from decoder: any Decoder) throws {
            let values = try decoder.container(keyedBy: Key.self)
            switch try values.decode(String.self, forKey: .kind) {
            case "cell":
                self = .cell(
                    level: try values.decode(Int.self, forKey: .level), x: try values.decode(UInt32.self, forKey: .x),
                    y: try values.decode(UInt32.self, forKey: .y))
            case "location":
                self = .location(
                    latitude: try values.decode(Double.self, forKey: .latitude),
                    longitude: try values.decode(Double.self, forKey: .longitude))
            case "point": self = .point(record: try values.decode(Int.self, forKey: .record))
            case "filtered":
                self = .filtered(
                    categories: try values.decode(String.self, forKey: .categories),
                    of: try values.decode(Expected.self, forKey: .of))
            case "merged": self = .merged(try values.decode([Expected].self, forKey: .parts))
            case let kind:
                throw DecodingError.dataCorruptedError(forKey: .kind, in: values, debugDescription: "kind \(kind)")
            }
        }

        /// What the grammar's own type decoded, in the vectors' terms.
        init(_ text: ClusterIDText) {
            self = text.isMerged ? .merged(text.parts.map(Expected.init)) : Expected(text.parts[0])
        }

        init(_ id: ClusterID<Int>) {
            switch id {
            case .cell(let cell): self = .cell(level: cell.level, x: cell.x, y: cell.y)
            case .location(let coordinate):
                self = .location(latitude: coordinate.latitude, longitude: coordinate.longitude)
            case .element(let record): self = .point(record: record)
            case .filteredCell, .filteredLocation:
                let categories = id.categoryFilter.map(String.init(describing:)) ?? ""
                self = .filtered(categories: categories, of: Expected(id.unfiltered))
            }
        }
    }

    struct Vectors: Decodable {
        struct Valid: Decodable {
            let text: String
            let id: Expected
        }
        let valid: [Valid]
        let invalid: [String]

        /// The file, found from this one's folder upwards: the thread-sanitized suite reaches these tests through a
        /// link from another folder.
        static func load() throws -> Vectors {
            var folder = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent()
            while folder.path != "/" {
                let file = folder.appendingPathComponent("vectors/cluster-ids.json")
                if FileManager.default.fileExists(atPath: file.path) {
                    return try JSONDecoder().decode(Vectors.self, from: Data(contentsOf: file))
                }
                folder.deleteLastPathComponent()
            }
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "Tests/vectors/cluster-ids.json"])
        }
    }

    @Test func everyValidVectorDecodesToWhatItSaysAndEncodesBackToItsText() throws {
        let vectors = try Vectors.load()
        #expect(vectors.valid.count >= 10)
        for vector in vectors.valid {
            let decoded = try #require(ClusterIDText(vector.text), "\(vector.text)")
            #expect(Expected(decoded) == vector.id, "\(vector.text)")
            #expect(decoded.description == vector.text)
        }
        #expect(Set(vectors.valid.map { Expected(ClusterIDText($0.text)!) }).count == vectors.valid.count)
    }

    @Test func everyInvalidVectorIsRefused() throws {
        let vectors = try Vectors.load()
        #expect(vectors.invalid.count >= 20)
        for text in vectors.invalid {
            #expect(ClusterIDText(text) == nil, "'\(text)'")
        }
    }

    @Test func theIdsOfAnIndexAtEveryZoomRoundTrip() {
        let index = ClusterIndex([
            (0, Coordinate.checked(48.85, 2.35)), (1, .checked(48.85, 2.35)), (2, .checked(48.9, 2.4)),
            (3, .checked(-33.5, 151.25)), (4, .checked(-33.5001, 151.2502)),
        ])
        var ids: [ClusterID<Int>] = []
        for zoom in stride(from: 0.0, through: 20, by: 2) {
            ids += index.clustering().clusters(in: Viewport(center: .checked(0, 0), zoom: zoom, size: testScreen)).map(
                \.id)
            ids += index.clustering().clusters(
                in: Viewport(center: .checked(48.85, 2.35), zoom: zoom, size: testScreen)
            ).map(\.id)
        }
        ids += ids.map { ClusterID.filtered($0, categories: CategorySet(bits: 0b101)) }
        #expect(ids.contains { if case .location = $0 { true } else { false } })
        #expect(ids.contains { if case .cell = $0 { true } else { false } })
        #expect(ids.contains { if case .filteredCell = $0 { true } else { false } })
        for id in ids {
            #expect(ClusterIDText(ClusterIDText.text(of: id)) == ClusterIDText(id), "\(id)")
        }
        let merged = ClusterIDText(merged: Array(ids.prefix(3)))
        #expect(ClusterIDText(merged.description) == merged)
    }
}
