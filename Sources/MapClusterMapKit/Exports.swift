// An app that drives an MKMapView or a SwiftUI Map imports this module alone: the engine's types (points, options,
// clusters) and the manager's (the manager, its options, the display model) come with it.
@_exported public import MapCluster
@_exported public import MapClusterManager
