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
}
