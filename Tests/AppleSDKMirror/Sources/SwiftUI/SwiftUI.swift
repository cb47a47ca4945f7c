// swift-format-ignore-file: AllPublicDeclarationsHaveDocumentation

// Each declaration's documentation is Apple's page, whose URL the comment above it gives.
// The part of SwiftUI (with MapKit's SwiftUI map, which Apple ships as MapKit's SwiftUI overlay) that MapClusterMapKit
// and the SwiftUI example use, as Apple documents it: names, argument labels, defaults, result builders, main-actor
// isolation and Sendable conformances as the documentation shows them, each with the URL of its page. No view is ever
// drawn, so view bodies only satisfy the compiler; the values a test reads (a camera position's rectangle) are real.
@_exported import MapKit

/// What every body that SwiftUI would compute here returns: the mirror draws nothing.
func unreachable() -> Never {
    fatalError("the SwiftUI mirror draws no view")
}

// MARK: - Views and their builder

/// A type that represents part of your app's user interface.
///
/// https://developer.apple.com/documentation/swiftui/view
@MainActor @preconcurrency
public protocol View {
    // https://developer.apple.com/documentation/swiftui/view/body-swift.associatedtype
    associatedtype Body: View
    // https://developer.apple.com/documentation/swiftui/view/body-swift.property
    @ViewBuilder @MainActor @preconcurrency var body: Self.Body { get }
}

// https://developer.apple.com/documentation/swift/never
extension Never: View {
    // https://developer.apple.com/documentation/swift/never/body
    public var body: Never { unreachable() }
}

/// A custom parameter attribute that constructs views from closures.
///
/// https://developer.apple.com/documentation/swiftui/viewbuilder
@resultBuilder
public struct ViewBuilder {
    // https://developer.apple.com/documentation/swiftui/viewbuilder/buildexpression(_:)
    public static func buildExpression<Content: View>(_ content: Content) -> Content { content }
    // https://developer.apple.com/documentation/swiftui/viewbuilder/buildblock()
    public static func buildBlock() -> EmptyView { EmptyView() }
    // https://developer.apple.com/documentation/swiftui/viewbuilder/buildblock(_:)
    public static func buildBlock<Content: View>(_ content: Content) -> Content { content }
    // https://developer.apple.com/documentation/swiftui/viewbuilder/buildblock(_:)
    public static func buildBlock<each Content: View>(_ content: repeat each Content) -> TupleView<
        (repeat each Content)
    > {
        TupleView((repeat each content))
    }
    // https://developer.apple.com/documentation/swiftui/viewbuilder/buildeither(first:)
    public static func buildEither<TrueContent: View, FalseContent: View>(first: TrueContent)
        -> _ConditionalContent<TrueContent, FalseContent>
    {
        _ConditionalContent()
    }
    // https://developer.apple.com/documentation/swiftui/viewbuilder/buildeither(second:)
    public static func buildEither<TrueContent: View, FalseContent: View>(second: FalseContent)
        -> _ConditionalContent<TrueContent, FalseContent>
    {
        _ConditionalContent()
    }
}

/// A view that doesn't contain any content.
///
/// https://developer.apple.com/documentation/swiftui/emptyview
public struct EmptyView: View {
    // https://developer.apple.com/documentation/swiftui/emptyview/init()
    nonisolated public init() {}
    // https://developer.apple.com/documentation/swiftui/emptyview/body
    public var body: Never { unreachable() }
}

/// A View created from a swift tuple of View values.
///
/// https://developer.apple.com/documentation/swiftui/tupleview
public struct TupleView<T>: View {
    // https://developer.apple.com/documentation/swiftui/tupleview/init(_:)
    nonisolated public init(_ value: T) {}
    // https://developer.apple.com/documentation/swiftui/tupleview/body
    public var body: Never { unreachable() }
}

/// View content that shows one of two possible children.
///
/// https://developer.apple.com/documentation/swiftui/_conditionalcontent
public struct _ConditionalContent<TrueContent, FalseContent>: View where TrueContent: View, FalseContent: View {
    nonisolated init() {}
    // https://developer.apple.com/documentation/swiftui/_conditionalcontent/body
    public var body: Never { unreachable() }
}

/// The mirror's own view, whose body is never computed: what its modifiers return.
public struct ModifiedView<Content>: View {
    nonisolated init() {}
    // https://developer.apple.com/documentation/swiftui/modifiedview/body
    public var body: Never { unreachable() }
}

// MARK: - State

/// A property wrapper type that can read and write a value managed by SwiftUI.
///
/// https://developer.apple.com/documentation/swiftui/state
@propertyWrapper
public struct State<Value> {
    private var value: Value

    // https://developer.apple.com/documentation/swiftui/state/init(wrappedvalue:)
    public init(wrappedValue value: Value) {
        self.value = value
    }

    // https://developer.apple.com/documentation/swiftui/state/wrappedvalue
    public var wrappedValue: Value {
        get { value }
        nonmutating set { unreachable() }
    }

    // https://developer.apple.com/documentation/swiftui/state/projectedvalue
    public var projectedValue: Binding<Value> {
        Binding(get: { unreachable() }, set: { _ in unreachable() })
    }
}

/// A property wrapper type that can read and write a value owned by a source of truth.
///
/// https://developer.apple.com/documentation/swiftui/binding
@propertyWrapper
public struct Binding<Value> {
    private let get: () -> Value
    private let set: (Value) -> Void

    // https://developer.apple.com/documentation/swiftui/binding/init(get:set:)-6g3d5
    public init(get: @escaping () -> Value, set: @escaping (Value) -> Void) {
        self.get = get
        self.set = set
    }

    // https://developer.apple.com/documentation/swiftui/binding/wrappedvalue
    public var wrappedValue: Value {
        get { get() }
        nonmutating set { set(newValue) }
    }
}

// https://developer.apple.com/documentation/swiftui/state
extension State: Sendable where Value: Sendable {}

// MARK: - Layout

/// A container view that defines its content as a function of its own size and coordinate space.
///
/// https://developer.apple.com/documentation/swiftui/geometryreader
public struct GeometryReader<Content: View>: View {
    // https://developer.apple.com/documentation/swiftui/geometryreader/content
    public var content: (GeometryProxy) -> Content

    // https://developer.apple.com/documentation/swiftui/geometryreader/init(content:)
    public init(@ViewBuilder content: @escaping (GeometryProxy) -> Content) {
        self.content = content
    }

    // https://developer.apple.com/documentation/swiftui/geometryreader/body
    public var body: Never { unreachable() }
}

/// A proxy for access to the size and coordinate space (for anchor resolution) of the container view.
///
/// https://developer.apple.com/documentation/swiftui/geometryproxy
public struct GeometryProxy {
    // https://developer.apple.com/documentation/swiftui/geometryproxy/size
    public var size: CGSize { unreachable() }
}

/// An alignment in both axes.
///
/// https://developer.apple.com/documentation/swiftui/alignment
public struct Alignment: Equatable, Sendable {
    // https://developer.apple.com/documentation/swiftui/alignment/center
    public static let center = Alignment()
}

/// A 2D point in a view's coordinate space, in units of its size.
///
/// https://developer.apple.com/documentation/swiftui/unitpoint
public struct UnitPoint: Hashable, Sendable {
    // https://developer.apple.com/documentation/swiftui/unitpoint/center
    public static let center = UnitPoint()
}

// MARK: - Text, fonts, colours and shapes

/// A string key for a localized text.
///
/// https://developer.apple.com/documentation/swiftui/localizedstringkey
public struct LocalizedStringKey: Equatable, ExpressibleByStringInterpolation, Sendable {
    // https://developer.apple.com/documentation/swiftui/localizedstringkey/init(stringliteral:)
    public init(stringLiteral value: String) {}
    // https://developer.apple.com/documentation/swiftui/localizedstringkey/init(stringinterpolation:)
    public init(stringInterpolation: DefaultStringInterpolation) {}
}

/// A view that displays one or more lines of read-only text.
///
/// https://developer.apple.com/documentation/swiftui/text
public struct Text: View, Equatable, Sendable {
    // https://developer.apple.com/documentation/swiftui/text/init(_:tablename:bundle:comment:)
    nonisolated public init(
        _ key: LocalizedStringKey, tableName: String? = nil, bundle: Bundle? = nil, comment: StaticString? = nil
    ) {}
    // https://developer.apple.com/documentation/swiftui/text/init(_:)
    nonisolated public init<S: StringProtocol>(_ content: S) {}

    // https://developer.apple.com/documentation/swiftui/text/font(_:)
    nonisolated public func font(_ font: Font?) -> Text { self }
    // https://developer.apple.com/documentation/swiftui/text/foregroundstyle(_:)
    nonisolated public func foregroundStyle<S: ShapeStyle>(_ style: S) -> Text { self }

    // https://developer.apple.com/documentation/swiftui/text/body
    public var body: Never { unreachable() }
}

/// An environment-dependent font.
///
/// https://developer.apple.com/documentation/swiftui/font
public struct Font: Hashable, Sendable {
    // https://developer.apple.com/documentation/swiftui/font/caption
    public static let caption = Font()
    // https://developer.apple.com/documentation/swiftui/font/bold()
    public func bold() -> Font { self }
}

/// A color or pattern to use when rendering a shape.
///
/// https://developer.apple.com/documentation/swiftui/shapestyle
public protocol ShapeStyle: Sendable {}

/// A representation of a color that adapts to a given context.
///
/// https://developer.apple.com/documentation/swiftui/color
public struct Color: Hashable, ShapeStyle, View {
    private let name: String
    nonisolated private init(name: String) { self.name = name }
    // https://developer.apple.com/documentation/swiftui/color/body
    public var body: Never { unreachable() }

    // https://developer.apple.com/documentation/swiftui/color/blue
    nonisolated public static let blue = Color(name: "blue")
    // https://developer.apple.com/documentation/swiftui/color/orange
    nonisolated public static let orange = Color(name: "orange")
    // https://developer.apple.com/documentation/swiftui/color/red
    nonisolated public static let red = Color(name: "red")
    // https://developer.apple.com/documentation/swiftui/color/white
    nonisolated public static let white = Color(name: "white")
}

// https://developer.apple.com/documentation/swiftui/shapestyle/blue
extension ShapeStyle where Self == Color {
    // https://developer.apple.com/documentation/swiftui/shapestyle/blue
    public static var blue: Color { .blue }
    // https://developer.apple.com/documentation/swiftui/shapestyle/orange
    public static var orange: Color { .orange }
    // https://developer.apple.com/documentation/swiftui/shapestyle/red
    public static var red: Color { .red }
    // https://developer.apple.com/documentation/swiftui/shapestyle/white
    public static var white: Color { .white }
}

/// The foreground style in the current context.
///
/// https://developer.apple.com/documentation/swiftui/foregroundstyle
public struct ForegroundStyle: ShapeStyle {
    // https://developer.apple.com/documentation/swiftui/foregroundstyle/init()
    public init() {}
}

// https://developer.apple.com/documentation/swiftui/shapestyle/foreground
extension ShapeStyle where Self == ForegroundStyle {
    // https://developer.apple.com/documentation/swiftui/shapestyle/foreground
    public static var foreground: ForegroundStyle { ForegroundStyle() }
}

/// A style for rasterizing vector shapes.
///
/// https://developer.apple.com/documentation/swiftui/fillstyle
public struct FillStyle: Equatable, Sendable {
    // https://developer.apple.com/documentation/swiftui/fillstyle/init(eofill:antialiased:)
    public init(eoFill: Bool = false, antialiased: Bool = true) {}
}

/// A 2D shape that you can use when drawing a view.
///
/// https://developer.apple.com/documentation/swiftui/shape
public protocol Shape: Sendable, View {}

extension Shape {
    // https://developer.apple.com/documentation/swiftui/shape/body
    public var body: Never { unreachable() }

    // https://developer.apple.com/documentation/swiftui/shape/fill(_:style:)
    nonisolated public func fill<S: ShapeStyle>(_ content: S = .foreground, style: FillStyle = FillStyle()) -> some View
    {
        ModifiedView<Self>()
    }

    // https://developer.apple.com/documentation/swiftui/shape/stroke(_:linewidth:antialiased:)
    nonisolated public func stroke<S: ShapeStyle>(_ content: S, lineWidth: CGFloat = 1, antialiased: Bool = true)
        -> some View
    {
        ModifiedView<Self>()
    }
}

/// A circle centered on the frame of the view containing it.
///
/// https://developer.apple.com/documentation/swiftui/circle
public struct Circle: Shape {
    // https://developer.apple.com/documentation/swiftui/circle/init()
    nonisolated public init() {}
}

/// A control that initiates an action.
///
/// https://developer.apple.com/documentation/swiftui/button
@MainActor @preconcurrency
public struct Button<Label: View>: View {
    // https://developer.apple.com/documentation/swiftui/button/init(action:label:)
    nonisolated public init(action: @escaping @MainActor () -> Void, @ViewBuilder label: () -> Label) {}

    // https://developer.apple.com/documentation/swiftui/button/body
    public var body: Never { unreachable() }
}

// MARK: - View modifiers

extension View {
    // https://developer.apple.com/documentation/swiftui/view/font(_:)
    nonisolated public func font(_ font: Font?) -> some View { ModifiedView<Self>() }

    // https://developer.apple.com/documentation/swiftui/view/foregroundstyle(_:)
    nonisolated public func foregroundStyle<S: ShapeStyle>(_ style: S) -> some View { ModifiedView<Self>() }

    // https://developer.apple.com/documentation/swiftui/view/frame(width:height:alignment:)
    nonisolated public func frame(width: CGFloat? = nil, height: CGFloat? = nil, alignment: Alignment = .center)
        -> some View
    {
        ModifiedView<Self>()
    }

    // https://developer.apple.com/documentation/swiftui/view/background(alignment:content:)
    nonisolated public func background<V: View>(alignment: Alignment = .center, @ViewBuilder content: () -> V)
        -> some View
    {
        ModifiedView<Self>()
    }

    // https://developer.apple.com/documentation/swiftui/view/background(_:alignment:)
    @available(*, deprecated, message: "Use `background(alignment:content:)` instead.")
    nonisolated public func background<Background: View>(_ background: Background, alignment: Alignment = .center)
        -> some View
    {
        ModifiedView<Self>()
    }

    // https://developer.apple.com/documentation/swiftui/view/overlay(alignment:content:)
    nonisolated public func overlay<V: View>(alignment: Alignment = .center, @ViewBuilder content: () -> V)
        -> some View
    {
        ModifiedView<Self>()
    }

    // https://developer.apple.com/documentation/swiftui/view/overlay(_:alignment:)
    @available(*, deprecated, message: "Use `overlay(alignment:content:)` instead.")
    nonisolated public func overlay<Overlay: View>(_ overlay: Overlay, alignment: Alignment = .center) -> some View {
        ModifiedView<Self>()
    }

    // https://developer.apple.com/documentation/swiftui/view/task(name:priority:file:line:_:)
    nonisolated public func task(
        name: String? = nil, priority: TaskPriority = .userInitiated, file: String = #fileID, line: Int = #line,
        _ action: sending @escaping @isolated(any) () async -> Void
    ) -> some View {
        ModifiedView<Self>()
    }

    // https://developer.apple.com/documentation/swiftui/view/onmapcamerachange(frequency:_:)-2pcga
    @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *)
    @MainActor @preconcurrency
    public func onMapCameraChange(
        frequency: MapCameraUpdateFrequency = .onEnd, _ action: @escaping (MapCameraUpdateContext) -> Void
    ) -> some View {
        ModifiedView<Self>()
    }
}

// MARK: - Collections of content

/// A structure that computes views (or map content) on demand from an underlying collection of identified data.
///
/// https://developer.apple.com/documentation/swiftui/foreach
public struct ForEach<Data: RandomAccessCollection, ID: Hashable, Content> {
    // https://developer.apple.com/documentation/swiftui/foreach/data
    public var data: Data
    // https://developer.apple.com/documentation/swiftui/foreach/content
    public var content: (Data.Element) -> Content
}

// https://developer.apple.com/documentation/swiftui/foreach
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *)
extension ForEach: MapContent where Content: MapContent {
    // https://developer.apple.com/documentation/swiftui/foreach/init(_:content:)
    public init(_ data: Data, @MapContentBuilder content: @escaping (Data.Element) -> Content)
    where ID == Data.Element.ID, Data.Element: Identifiable {
        self.data = data
        self.content = content
    }

    // https://developer.apple.com/documentation/swiftui/foreach/body
    public var body: Never { unreachable() }
}

// MARK: - The map (MapKit for SwiftUI)

/// A type that represents parts of your map's content.
///
/// https://developer.apple.com/documentation/mapkit/mapcontent
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *)
@MainActor @preconcurrency
public protocol MapContent {
    // https://developer.apple.com/documentation/mapkit/mapcontent/body-swift.associatedtype
    associatedtype Body: MapContent
    // https://developer.apple.com/documentation/mapkit/mapcontent/body-swift.property
    @MapContentBuilder @MainActor @preconcurrency var body: Self.Body { get }
}

// https://developer.apple.com/documentation/swift/never
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *)
extension Never: MapContent {}

/// A result builder that creates map content from closures you provide.
///
/// https://developer.apple.com/documentation/mapkit/mapcontentbuilder
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *)
@resultBuilder
public struct MapContentBuilder {
    // https://developer.apple.com/documentation/mapkit/mapcontentbuilder/buildexpression(_:)
    public static func buildExpression<Content: MapContent>(_ content: Content) -> Content { content }
    // https://developer.apple.com/documentation/mapkit/mapcontentbuilder/buildblock(_:)
    public static func buildBlock<Content: MapContent>(_ content: Content) -> Content { content }
}

/// A customizable annotation that marks a map location.
///
/// https://developer.apple.com/documentation/mapkit/annotation
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *)
public struct Annotation<Label: View, Content: View>: MapContent {
    // https://developer.apple.com/documentation/mapkit/annotation/init(_:coordinate:anchor:content:)-6wnoh
    public init<S: StringProtocol>(
        _ title: S, coordinate: CLLocationCoordinate2D, anchor: UnitPoint = .center,
        @ViewBuilder content: () -> Content
    ) where Label == Text {}

    // https://developer.apple.com/documentation/mapkit/annotation/body
    public var body: Never { unreachable() }
}

/// The content a map view shows: what `Map`'s initializers build.
///
/// https://developer.apple.com/documentation/mapkit/mapcontentview
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *)
public struct MapContentView<SelectionValue: Hashable, Content: MapContent>: View {
    // https://developer.apple.com/documentation/mapkit/mapcontentview/body
    public var body: Never { unreachable() }
}

/// A position that determines how a map frames its content.
///
/// https://developer.apple.com/documentation/mapkit/mapcameraposition
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *)
public struct MapCameraPosition: Equatable, Sendable {
    // https://developer.apple.com/documentation/mapkit/mapcameraposition/rect
    public let rect: MKMapRect?

    // https://developer.apple.com/documentation/mapkit/mapcameraposition/automatic
    public static var automatic: MapCameraPosition { MapCameraPosition(rect: nil) }

    // https://developer.apple.com/documentation/mapkit/mapcameraposition/rect(_:)
    public static func rect(_ rect: MKMapRect) -> MapCameraPosition { MapCameraPosition(rect: rect) }
}

/// A view that displays an embedded map interface.
///
/// https://developer.apple.com/documentation/mapkit/map
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *)
@MainActor @preconcurrency
public struct Map<Content: View>: View {
    // https://developer.apple.com/documentation/mapkit/map/init(initialposition:bounds:interactionmodes:scope:content:)
    public init<C: MapContent>(
        initialPosition: MapCameraPosition, bounds: MapCameraBounds? = nil,
        interactionModes: MapInteractionModes = .all,
        scope: Namespace.ID? = nil, @MapContentBuilder content: () -> C
    ) where Content == MapContentView<Never, C> {}

    // https://developer.apple.com/documentation/mapkit/map/init(position:bounds:interactionmodes:scope:content:)
    public init<C: MapContent>(
        position: Binding<MapCameraPosition>, bounds: MapCameraBounds? = nil,
        interactionModes: MapInteractionModes = .all, scope: Namespace.ID? = nil, @MapContentBuilder content: () -> C
    ) where Content == MapContentView<Never, C> {}

    // https://developer.apple.com/documentation/mapkit/map/body
    public var body: Never { unreachable() }
}

/// A bounding rectangle and zoom limits for a map's camera.
///
/// https://developer.apple.com/documentation/mapkit/mapcamerabounds
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *)
public struct MapCameraBounds: Sendable {}

/// The ways a person can interact with a map.
///
/// https://developer.apple.com/documentation/mapkit/mapinteractionmodes
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *)
public struct MapInteractionModes: OptionSet, Sendable {
    // https://developer.apple.com/documentation/mapkit/mapinteractionmodes/rawvalue
    public let rawValue: Int
    // https://developer.apple.com/documentation/mapkit/mapinteractionmodes/init(rawvalue:)
    public init(rawValue: Int) { self.rawValue = rawValue }
    // https://developer.apple.com/documentation/mapkit/mapinteractionmodes/all
    public static let all = MapInteractionModes(rawValue: 0xF)
}

/// A dynamic property type that allows access to a namespace defined by the persistent identity of the object
/// containing the property.
///
/// https://developer.apple.com/documentation/swiftui/namespace
public struct Namespace {
    // https://developer.apple.com/documentation/swiftui/namespace/id
    public struct ID: Hashable, Sendable {}
}

/// A structure that describes when the map camera updates.
///
/// https://developer.apple.com/documentation/mapkit/mapcameraupdatefrequency
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *)
public struct MapCameraUpdateFrequency: Sendable {
    // https://developer.apple.com/documentation/mapkit/mapcameraupdatefrequency/continuous
    public static var continuous: MapCameraUpdateFrequency { MapCameraUpdateFrequency() }
    // https://developer.apple.com/documentation/mapkit/mapcameraupdatefrequency/onend
    public static var onEnd: MapCameraUpdateFrequency { MapCameraUpdateFrequency() }
}

/// A structure that defines additional information about the map camera.
///
/// https://developer.apple.com/documentation/mapkit/mapcameraupdatecontext
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *)
public struct MapCameraUpdateContext {
    // https://developer.apple.com/documentation/mapkit/mapcameraupdatecontext/camera
    public let camera: MapCamera
    // https://developer.apple.com/documentation/mapkit/mapcameraupdatecontext/rect
    public let rect: MKMapRect
}

/// A structure that defines the viewing angle, heading, altitude and distance of a map.
///
/// https://developer.apple.com/documentation/mapkit/mapcamera
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *)
public struct MapCamera: Equatable, Sendable {
    // https://developer.apple.com/documentation/mapkit/mapcamera/heading
    public var heading: CLLocationDirection
}
