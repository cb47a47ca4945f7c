/// An index and the options it is clustered with: the jobs that build on the clustering pass (a cluster's members,
/// bounds and hierarchy; the cluster holding an element; revealing zooms), one file each.
///
/// The pass itself is ``ClusteringPass``, which knows nothing of the element type; this value names the elements.
/// It is made for one question: it holds the index (shared, not copied) and the options, and allocates nothing.
struct GridClustering<Element: Hashable & Sendable> {
    typealias Entry = IndexEntry

    let index: ClusterIndex<Element>
    let options: ClusterOptions<Element>
    /// What of the options shapes clusters, which each cluster made here carries.
    let stamp: ClusteringStamp

    init(index: ClusterIndex<Element>, options: ClusterOptions<Element>, stamp: ClusteringStamp) {
        self.index = index
        self.options = options
        self.stamp = stamp
    }

    /// The clustering that makes a cluster with id `id`: `options` with the category filter the id carries (a filter is
    /// part of what a cluster is), or without one for an unfiltered cluster of several elements.
    init(
        index: ClusterIndex<Element>, options: ClusterOptions<Element>, stamp: ClusteringStamp,
        madeFor id: ClusterID<Element>
    ) {
        var options = options
        if !id.isElement {
            options.categories = id.categoryFilter.map { index.schema?.names(in: $0) ?? [] }
        }
        self.init(index: index, options: options, stamp: stamp)
    }

    var tree: MortonTree { index.tree }

    /// The category filter of the clustering, as a set of the schema's categories.
    var categories: CategorySet? { options.categories.map(index.categorySet) }

    /// Whether an element of the index is one of the filter's categories (always, without a filter).
    func isSelected(_ element: Element) -> Bool {
        guard let categories else { return true }
        guard let slot = index.slots.find(element, in: index.store).slot,
            let entry = tree.entry(key: index.store[Int(slot)].key, where: { $0.slot == slot })
        else { return false }
        return categories.admits(code: entry.category)
    }

    /// The pass, for its questions about entries.
    var pass: ClusteringPass { ClusteringPass(tree: tree, rules: index.clusteringRules(options)) }

    /// The element an entry refers to.
    @inline(__always) func element(of entry: Entry) -> Element { index.store[Int(entry.slot)].element }

    /// The clusters of every cell of `region`, at `zoom`, in key order of their cells, of the elements `filter` takes:
    /// all of them, or (for a cluster's children) the clusterable ones.
    func clusters(in region: CellRegion, zoom: Double, taking filter: MemberFilter) -> [Cluster<Element>] {
        index.makeClusters(
            in: region, zoom: zoom, options: options, stamp: stamp, pass: pass, taking: filter, stop: nil) ?? []
    }
}
