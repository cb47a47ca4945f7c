import Hummingbird
package import MapClusterIO
import MapClusterLive

/// What an acknowledged edit did: `{"inserted":…,"moved":…,"deleted":…,"sequence":…,"version":…}`, and the ids of
/// a delete list that were not there.
package struct EditAnswer: ResponseEncodable, Sendable {
    /// Points added.
    package var inserted: Int
    /// Points moved or given new properties.
    package var moved: Int
    /// Points deleted.
    package var deleted: Int
    /// The store's sequence number of the edit.
    package var sequence: Int64
    /// The version of the points that first holds it.
    package var version: Int
    /// Ids of a delete list that no point had.
    package var missing: [PropertyValue]?

    init(receipt: WriteReceipt) {
        inserted = receipt.inserted
        moved = receipt.moved
        deleted = receipt.deleted
        sequence = receipt.sequence
        version = receipt.version
    }
}
