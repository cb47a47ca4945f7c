import Foundation
import MapCluster
import MapClusterIO

/// A picture of clusters as SVG: the world outline as a basemap, clusters as circles labelled with their counts, single
/// points as dots.
struct SVGMap: Sendable {
    /// The area drawn, on the plane; it may cross the antimeridian.
    var rect: MapRect
    /// The picture's width and height, in pixels.
    var width: Int
    /// The picture's height, in pixels.
    var height: Int

    /// A picture of `rect` at `width` × `height` pixels (the rect is stretched to fill it).
    init(rect: MapRect, width: Int, height: Int) {
        precondition(width > 0 && height > 0, "a picture has a positive size")
        self.rect = rect
        self.width = width
        self.height = height
    }

    /// The SVG text: the outline's polygons (GeoJSON Polygon and MultiPolygon features), then the clusters.
    func render(_ clusters: [Cluster<Int>], outline: PropertyValue?) -> String {
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(width)" height="\(height)" viewBox="0 0 \(width) \(height)" \
            font-family="Helvetica, Arial, sans-serif">
            <rect width="100%" height="100%" fill="#cfe3ef"/>

            """
        if let outline {
            svg += "<g fill=\"#f4f1ea\" stroke=\"#8a9a8c\" stroke-width=\"0.6\">\n"
            for ring in Self.rings(of: outline) {
                for shift in shifts {
                    let points = ring.map { pixel(of: $0, shift: shift) }
                    svg +=
                        "<path d=\"M" + points.map { "\(format($0.x)),\(format($0.y))" }.joined(separator: "L")
                        + "Z\"/>\n"
                }
            }
            svg += "</g>\n"
        }
        for cluster in clusters.sorted(by: { $0.count < $1.count }) {
            let point = pixel(of: cluster.coordinate.mapPoint, shift: shift(of: cluster.coordinate.mapPoint))
            if cluster.isCluster {
                let radius = 9 + 5 * log10(Double(cluster.count))
                let color = cluster.count < 100 ? "#3b8bd0" : cluster.count < 1_000 ? "#e0902a" : "#d2452f"
                svg += """
                    <g><circle cx="\(format(point.x))" cy="\(format(point.y))" r="\(format(radius))" fill="\(color)" \
                    stroke="#fff" stroke-width="2" fill-opacity="0.9"/><text x="\(format(point.x))" \
                    y="\(format(point.y + 4))" text-anchor="middle" font-size="11" font-weight="bold" fill="#fff">\
                    \(ClusterGeoJSON.abbreviated(cluster.count))</text></g>

                    """
            } else {
                svg += """
                    <circle cx="\(format(point.x))" cy="\(format(point.y))" r="3" fill="#1f5f99" stroke="#fff" \
                    stroke-width="1"/>

                    """
            }
        }
        return svg + "</svg>\n"
    }

    /// The outline's rings, as points of the plane.
    static func rings(of outline: PropertyValue) -> [[MapPoint]] {
        guard case .object(let collection) = outline, case .array(let features) = collection["features"] else {
            return []
        }
        var rings: [[MapPoint]] = []
        for case .object(let feature) in features {
            guard case .object(let geometry) = feature["geometry"],
                case .array(let coordinates) = geometry["coordinates"]
            else { continue }
            let polygons: [PropertyValue] =
                geometry["type"] == .string("MultiPolygon") ? coordinates : [.array(coordinates)]
            for case .array(let polygon) in polygons {
                for case .array(let ring) in polygon {
                    rings.append(
                        ring.compactMap { position in
                            guard case .array(let pair) = position, pair.count >= 2,
                                case .number(let longitude) = pair[0],
                                case .number(let latitude) = pair[1],
                                let coordinate = try? Coordinate(latitude: latitude, longitude: longitude)
                            else { return nil }
                            return coordinate.mapPoint
                        })
                }
            }
        }
        return rings
    }

    /// The copies of the world the rect shows: one, or two when it crosses the antimeridian.
    private var shifts: [Double] {
        rect.maxX > MapSize.world.width ? [0, MapSize.world.width] : rect.minX < 0 ? [0, -MapSize.world.width] : [0]
    }

    /// The copy of the world a point is drawn in: the one whose x falls in the rect.
    private func shift(of point: MapPoint) -> Double {
        shifts.first { rect.minX <= point.x + $0 && point.x + $0 < rect.maxX } ?? 0
    }

    private func pixel(of point: MapPoint, shift: Double) -> (x: Double, y: Double) {
        (
            (point.x + shift - rect.minX) / rect.size.width * Double(width),
            (point.y - rect.minY) / rect.size.height * Double(height)
        )
    }

    private func format(_ value: Double) -> String {
        String(format: "%.1f", value)
    }
}
