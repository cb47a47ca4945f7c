/// A user's reduction as the tree keeps it: each element stores its own value.
struct Reduced<Value: ClusterAggregate>: NodeValue, Equatable {
    typealias Stored = Value

    var value: Value

    static var identity: Reduced { Reduced(value: .identity) }

    init(value: Value) { self.value = value }

    init(entry: IndexEntry, stored: Value) { value = stored }

    mutating func merge(_ other: Reduced) { value.merge(other.value) }
}
