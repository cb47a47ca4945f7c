/// How a server counts zooms in its options and its API: as Leaflet does, whose world is 256 points wide at zoom 0,
/// or as MapLibre does, whose world is 512 points wide at zoom 0 and so one zoom less at the same scale.
///
/// Tiles are addressed by tile zoom whatever the convention (512-point tiles, as MapLibre draws them); their
/// `expansion_zoom` is MapLibre's.
package enum ZoomConvention: String, Sendable, CaseIterable, Codable {
    /// Leaflet's zooms (and OpenLayers', Google Maps'): 256-point tiles. The API's zooms by default.
    case leaflet
    /// MapLibre's and Mapbox GL's zooms: 512-point tiles, one less than Leaflet's at the same scale.
    case maplibre

    /// How many zooms a zoom of this convention is below the engine's, which counts as Leaflet does.
    package var offset: Double {
        switch self {
        case .leaflet: 0
        case .maplibre: 1
        }
    }

    /// The side of a tile, in points, at the zoom a tile has in this convention.
    package var tileSize: Double { 256 * (1 + offset) }

    /// The engine's zoom of a zoom told in this convention.
    package func engineZoom(_ zoom: Double) -> Double { zoom + offset }

    /// A zoom of the engine's, told in this convention (never below 0).
    package func zoom(ofEngineZoom zoom: Double) -> Double { max(0, zoom - offset) }
}
