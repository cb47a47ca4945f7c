#if canImport(MapKit) && !os(watchOS)
    public import MapKit
    #if canImport(UIKit)
        import UIKit
    #elseif canImport(AppKit)
        import AppKit
    #endif

    /// One update's annotations as an animator sees them: each with where it starts and where it ends.
    ///
    /// An annotation is a ``ClusterAnnotation``, or one of the app's own (a single element of an adapter of
    /// ``AnnotationElement``s). Both move by ``Move/place(at:)``: a cluster annotation by its coordinate, the app's own,
    /// whose coordinate is the app's, by its view's `centerOffset` from that coordinate. So the fade and the glide are
    /// the same on the app's views as on the adapter's.
    @MainActor
    public struct ClusterAnimation {
        /// An annotation and its path.
        public struct Move {
            /// The annotation, on the map: a ``ClusterAnnotation``, or one of the app's own.
            public let annotation: any MKAnnotation
            /// Its view, as MapKit made it; `nil` while it has none (off screen).
            public let view: MKAnnotationView?
            /// Where it is when the animation begins.
            public let start: CLLocationCoordinate2D
            /// Where it is when the animation ends.
            public let end: CLLocationCoordinate2D
            /// What moves it.
            let placer: @MainActor (CLLocationCoordinate2D) -> Void

            /// Shows the annotation at a coordinate: inside an animation block, its view glides there.
            @MainActor public func place(at coordinate: CLLocationCoordinate2D) {
                placer(coordinate)
            }
        }

        /// New annotations whose views MapKit has just added, at their start (where the cluster they split out of
        /// stood).
        public let appearing: [Move]
        /// Annotations that go: removed from the map once the animation completes.
        public let disappearing: [Move]
        /// Annotations that stay and change place.
        public let moving: [Move]
        /// How long the animation takes, in seconds.
        public let duration: Double
    }

    /// Animates a ``ClusterAnimation`` on a map: implement it for custom effects, and set it as a
    /// ``MKMapViewAdapter/animator``.
    @MainActor
    public protocol ClusterAnnotationAnimator {
        /// Animates the annotations to their ends and calls `completion` when done (the controller then removes the
        /// disappearing annotations from the map).
        func animate(_ animation: ClusterAnimation, in mapView: MKMapView, completion: @escaping @MainActor () -> Void)
    }

    /// The default animator: annotations fade in and out and glide from where they split or to where they merge.
    public struct FadeAndMoveAnimator: ClusterAnnotationAnimator {
        /// The default animator.
        public init() {}

        /// Fades and moves, as the animation's duration says.
        public func animate(
            _ animation: ClusterAnimation, in mapView: MKMapView, completion: @escaping @MainActor () -> Void
        ) {
            let appearingViews = animation.appearing.compactMap(\.view)
            let disappearingViews = animation.disappearing.compactMap(\.view)
            for view in appearingViews { setOpacity(of: view, to: 0) }
            run(duration: animation.duration) {
                for move in animation.appearing + animation.disappearing + animation.moving {
                    move.place(at: move.end)
                }
                for view in appearingViews { setOpacity(of: view, to: 1) }
                for view in disappearingViews { setOpacity(of: view, to: 0) }
            } completion: {
                // Views MapKit recycles must come back opaque.
                for view in disappearingViews { setOpacity(of: view, to: 1) }
                completion()
            }
        }

        private func setOpacity(of view: MKAnnotationView, to opacity: Double) {
            #if canImport(UIKit)
                view.alpha = CGFloat(opacity)
            #else
                view.alphaValue = CGFloat(opacity)
            #endif
        }

        private func run(
            duration: Double, _ changes: @escaping @MainActor () -> Void,
            completion: @escaping @MainActor () -> Void
        ) {
            #if canImport(UIKit)
                UIView.animate(
                    withDuration: duration, delay: 0, options: [.beginFromCurrentState, .curveEaseInOut],
                    animations: { MainActor.assumeIsolated { changes() } },
                    completion: { _ in MainActor.assumeIsolated { completion() } })
            #else
                NSAnimationContext.runAnimationGroup { context in
                    context.duration = duration
                    context.allowsImplicitAnimation = true
                    MainActor.assumeIsolated { changes() }
                } completionHandler: {
                    MainActor.assumeIsolated { completion() }
                }
            #endif
        }
    }
#endif
