// SwiftUI's Map of the world's cities, clustered by MapCluster. Copy into an app target: the view needs iOS 17 or
// macOS 14 (SwiftUI's Map content), the library iOS 15 or macOS 12.
import MapClusterIO
import MapClusterMapKit
import MapKit
import SwiftUI

@available(iOS 17.0, macOS 14.0, *)
struct ClusteredMapView: View {
    @State private var model = ClusterMapModel<String>()
    @State private var position = MapCameraPosition.automatic

    var body: some View {
        GeometryReader { geometry in
            Map(position: $position) {
                ForEach(model.markers) { marker in
                    Annotation(model.title(of: marker) ?? "", coordinate: marker.coordinate.clLocationCoordinate) {
                        // A tap on a cluster zooms to where it splits.
                        Button {
                            if let next = model.cameraPosition(expanding: marker) { position = next }
                        } label: {
                            MarkerBadge(count: marker.count)
                        }
                    }
                }
            }
            .onMapCameraChange(frequency: .onEnd) { context in
                model.cameraDidChange(context, size: geometry.size)
            }
        }
        .task {
            guard let url = Bundle.main.url(forResource: "world-cities-15000", withExtension: "csv"),
                let cities = try? CSVPointReader().read(contentsOf: url)
            else { return }
            try? await model.add(cities.records.map { Placement($0.id, at: $0.coordinate) })
        }
    }
}

/// A disc with the count for a cluster, a dot for a single city.
private struct MarkerBadge: View {
    let count: Int

    var body: some View {
        if count > 1 {
            Text(count < 1_000 ? "\(count)" : "\(count / 1_000)k")
                .font(.caption.bold())
                .foregroundStyle(.white)
                .frame(width: 28 + 6 * log10(Double(count)), height: 28 + 6 * log10(Double(count)))
                .background { Circle().fill(count < 100 ? .blue : count < 1_000 ? .orange : .red) }
                .overlay { Circle().stroke(.white, lineWidth: 2) }
        } else {
            Circle().fill(.blue).frame(width: 10, height: 10).overlay { Circle().stroke(.white, lineWidth: 1.5) }
        }
    }
}
