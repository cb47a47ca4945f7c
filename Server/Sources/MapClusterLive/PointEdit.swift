import MapCluster
@_spi(MapClusterServer) public import MapClusterIO

/// One edit of a live server's points, checked and ready to commit: points to put (add, or move and give new
/// properties) or points to delete.
public struct PointEdit: Sendable {
    /// The points to put, with their properties.
    public var puts: PointSet
    /// The points to delete.
    public var deletes: [PointKey]

    /// An edit that puts points.
    public init(puts: PointSet) {
        self.puts = puts
        deletes = []
    }

    /// An edit that deletes points.
    public init(deletes: [PointKey]) {
        puts = PointSet(propertyNames: [], records: RecordTable())
        self.deletes = deletes
    }

    /// The edit a store committed: its points' properties read back from their JSON text.
    ///
    /// Properties that are not a JSON object (written by something else than MapCluster) are dropped, with the point
    /// kept where it is.
    public init(_ batch: StoreBatch) {
        var names: [String] = []
        var position: [String: Int] = [:]
        var records: [PointRecord] = []
        records.reserveCapacity(batch.puts.count)
        for point in batch.puts {
            var values: [PropertyValue] = []
            if case .object(let members)? = PropertyValue(jsonText: point.properties) {
                values = [PropertyValue](repeating: .null, count: names.count)
                for (name, value) in members.sorted(by: { $0.key < $1.key }) {
                    let index: Int
                    if let known = position[name] {
                        index = known
                    } else {
                        index = names.count
                        position[name] = index
                        names.append(name)
                        values.append(.null)
                    }
                    values[index] = value
                }
            }
            // A stored coordinate was valid when it was committed; one edited into the database by hand to something
            // invalid is left out.
            guard let coordinate = try? Coordinate(latitude: point.latitude, longitude: point.longitude) else {
                continue
            }
            records.append(
                PointRecord(
                    id: point.key.id, idKind: point.key.isNumber ? .number : .text, coordinate: coordinate,
                    properties: values))
        }
        puts = PointSet(propertyNames: names, records: records)
        deletes = batch.deletes
    }

    /// The edit as a store commits it.
    public var storeBatch: StoreBatch {
        StoreBatch(
            puts: puts.records.map { record in
                StoredPoint(
                    key: PointKey(record), longitude: record.coordinate.longitude,
                    latitude: record.coordinate.latitude,
                    properties: PropertyValue.object(puts.properties(of: record)).jsonText)
            },
            deletes: deletes)
    }

    /// How many points it touches.
    public var count: Int { puts.records.count + deletes.count }
}
