// An MKMapView of the world's cities, clustered by MapCluster. Copy into an iOS app target.
import MapClusterIO
import MapClusterMapKit
import MapKit
import UIKit

final class MapViewController: UIViewController, MKMapViewDelegate {
    private let mapView = MKMapView()
    private lazy var clusters = MKMapViewAdapter<String>(mapView: mapView)

    override func viewDidLoad() {
        super.viewDidLoad()
        mapView.frame = view.bounds
        mapView.autoresizingMask = [.flexibleWidth, .flexibleHeight]
        mapView.delegate = self
        view.addSubview(mapView)

        var options = ClusterManagerOptions<String>()
        options.clustering.cellSize = 80
        options.overlap = .merge(markerSize: ViewSize(width: 44, height: 44))
        options.sameLocation = SameLocationFanOut(radius: 24)
        do {
            try clusters.setOptions(options)
        } catch {
            // Constant options: one that `validate()` refuses is a programming error.
            assertionFailure("\(error)")
        }
        navigationItem.rightBarButtonItems = [
            UIBarButtonItem(title: "Grid", style: .plain, target: self, action: #selector(toggleGrid)),
            UIBarButtonItem(title: "Paris", style: .plain, target: self, action: #selector(revealParis)),
        ]

        // The bundled cities: read off the main thread, then handed to the controller in one batch.
        Task.detached {
            guard let url = Bundle.main.url(forResource: "world-cities-15000", withExtension: "csv"),
                let cities = try? CSVPointReader().read(contentsOf: url)
            else { return }
            let placements = cities.records.map { Placement($0.id, at: $0.coordinate) }
            await MainActor.run { self.clusters.add(placements) }
        }
    }

    // The three delegate methods MapCluster needs; everything else stays the app's.

    func mapView(_ mapView: MKMapView, regionDidChangeAnimated animated: Bool) {
        clusters.regionDidChange()
    }

    func mapView(_ mapView: MKMapView, viewFor annotation: any MKAnnotation) -> MKAnnotationView? {
        let view = clusters.view(for: annotation, in: mapView)
        (view as? StyledClusterAnnotationView)?.style = .color(.systemIndigo, radius: 14)
        view?.canShowCallout = true
        return view
    }

    // MapKit makes views after their annotations are added: the fade and glide of each marker start here.
    func mapView(_ mapView: MKMapView, didAdd views: [MKAnnotationView]) {
        clusters.didAdd(views)
    }

    func mapView(_ mapView: MKMapView, didSelect view: MKAnnotationView) {
        // A tap on a cluster zooms to its members.
        guard let cluster = view.annotation as? ClusterAnnotation, cluster.isCluster, !cluster.isSameLocation else {
            return
        }
        mapView.setVisibleMapRect(
            cluster.mapRect, edgePadding: UIEdgeInsets(top: 60, left: 60, bottom: 60, right: 60), animated: true)
    }

    func mapView(_ mapView: MKMapView, rendererFor overlay: any MKOverlay) -> MKOverlayRenderer {
        ClusterGrid.renderer(for: overlay) ?? MKOverlayRenderer(overlay: overlay)
    }

    @objc private func toggleGrid() {
        clusters.showsDebugGrid.toggle()
        clusters.regionDidChange()
    }

    @objc private func revealParis() {
        clusters.selectAndReveal("2988507")  // Paris's GeoNames id
    }
}
