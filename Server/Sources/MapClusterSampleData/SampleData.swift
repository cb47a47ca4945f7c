public import Foundation

/// The data set bundled with the package: the 34,006 cities of the world with 15,000 or more people.
///
/// Contains data from GeoNames (geonames.org), CC BY 4.0.
public enum SampleData {
    /// The location of `world-cities-15000.csv` (columns `id,lat,lon,name,population,country`).
    public static var worldCitiesURL: URL {
        guard let url = Bundle.module.url(forResource: "world-cities-15000", withExtension: "csv") else {
            preconditionFailure("the bundled sample data set is missing from the package's resources")
        }
        return url
    }

    /// The bundled world outline: the 177 country outlines of Natural Earth's Admin 0 Countries at 1:110m (public
    /// domain), as a GeoJSON FeatureCollection, for a basemap that needs no network.
    public static var worldOutlineURL: URL {
        guard let url = Bundle.module.url(forResource: "world-110m", withExtension: "geojson") else {
            preconditionFailure("the bundled world outline is missing from the package's resources")
        }
        return url
    }
}
