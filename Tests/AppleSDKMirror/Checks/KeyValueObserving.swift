// What MapKit observes of the adapter's annotations: it moves an annotation's view, and refreshes its callout, by
// key-value observing, which sees only properties Objective-C sees. `#keyPath` refuses any other, so this file
// compiles only while coordinate, title and subtitle stay @objc (scripts/check-mapkit.sh, for iOS and macOS).
import MapClusterMapKit

@MainActor
func keyPathsMapKitObserves() -> [String] {
    [
        #keyPath(ClusterAnnotation.coordinate), #keyPath(ClusterAnnotation.title),
        #keyPath(ClusterAnnotation.subtitle),
    ]
}
