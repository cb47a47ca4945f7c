/// An index and the options it is clustered with: the jobs that build on the clustering pass (a cluster's members,
/// bounds and hierarchy; the cluster holding an element; revealing zooms), one file each.
///
/// The pass itself is ``ClusteringPass``, which knows nothing of the element type; this value names the elements.
/// It is made for one question: it holds the index (shared, not copied) and the options, and allocates nothing.
struct GridClustering<Element: Hashable & Sendable> {
    typealias Entry = IndexEntry

    let index: ClusterIndex<Element>
    let options: ClusterOptions<Element>

    var tree: MortonTree { index.tree }

    /// The pass, for its questions about entries.
    var pass: ClusteringPass { ClusteringPass(tree: tree, rules: index.clusteringRules(options)) }

    /// The element an entry refers to.
    @inline(__always) func element(of entry: Entry) -> Element { index.store[Int(entry.slot)].element }

    /// The clusters of every cell of `region`, at `zoom`, in key order of their cells, of the elements `filter` takes:
    /// all of them, or (for a cluster's children) the clusterable ones.
    func clusters(in region: CellRegion, zoom: Double, taking filter: MemberFilter) -> [Cluster<Element>] {
        index.clusters(in: region, zoom: zoom, options: options, taking: filter) { false } ?? []
    }
}
