/// Cluster ids as text, for a URL path, a GeoJSON `cluster_id` or a vector tile's property: the one place their
/// grammar is written and read (<doc:ClusterIDs> gives it whole).
///
/// It names one cluster, or the clusters a manager merged into one marker because their markers overlapped. Its
/// elements are record positions (`Int`), as a server's points are.
///
/// | kind | text | example |
/// | --- | --- | --- |
/// | a cell's cluster | `c` level `.` x `.` y | `c12.2200.1343` |
/// | a location's cluster | `l` latitude `_` longitude | `l48.8566_2.3522` |
/// | a filtered cluster | `f` category bits in hexadecimal `-` a cell's or location's id | `f38-c12.2200.1343` |
/// | one point | `p` its record's position | `p1204` |
/// | merged clusters | `m` two or more of the above joined by `~` | `mc9.261.176~p1204` |
///
/// Every text is safe in a URL path as it is, and ``init(_:)-(String)`` reads back what ``description`` writes.
public struct ClusterIDText: Hashable, Sendable, LosslessStringConvertible {
    /// The clusters it names: one, or two or more merged.
    public let parts: [ClusterID<Int>]

    /// The text of one cluster's id.
    public init(_ id: ClusterID<Int>) { parts = [id] }

    /// The text of clusters merged into one marker: two or more, none of them merged already.
    public init(merged parts: [ClusterID<Int>]) {
        precondition(parts.count > 1, "a merged id has two parts or more")
        self.parts = parts
    }

    /// Whether it names clusters merged into one marker.
    public var isMerged: Bool { parts.count > 1 }

    /// The id as text.
    public var description: String {
        isMerged ? "m" + parts.map(Self.text(of:)).joined(separator: "~") : Self.text(of: parts[0])
    }

    /// The id a text (``description``) stands for, or `nil` if it isn't one.
    public init?(_ text: String) {
        guard text.first == "m" else {
            guard let id = Self.clusterID(text: Substring(text)) else { return nil }
            parts = [id]
            return
        }
        let parts = text.dropFirst().split(separator: "~", omittingEmptySubsequences: false).map(Self.clusterID(text:))
        guard parts.count > 1, parts.allSatisfy({ $0 != nil }) else { return nil }
        self.parts = parts.compactMap { $0 }
    }

    /// One cluster's id as text: what ``description`` writes for an id that isn't merged.
    public static func text(of id: ClusterID<Int>) -> String {
        switch id {
        case .cell(let cell): "c\(cell.level).\(cell.x).\(cell.y)"
        case .location(let coordinate): "l\(coordinate.latitude)_\(coordinate.longitude)"
        case .element(let record): "p\(record)"
        case .filteredCell, .filteredLocation:
            "f\(id.categoryFilter.map(String.init(describing:)) ?? "")-\(text(of: id.unfiltered))"
        }
    }

    /// The id of one part: any kind but merged.
    private static func clusterID(text: Substring) -> ClusterID<Int>? {
        guard let kind = text.first else { return nil }
        let body = text.dropFirst()
        switch kind {
        case "c":
            let parts = body.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 3, let level = number(parts[0], as: Int.self), level <= GridCell.maxLevel,
                let x = number(parts[1], as: UInt32.self), let y = number(parts[2], as: UInt32.self),
                level == GridCell.maxLevel || (x >> level == 0 && y >> level == 0)
            else { return nil }
            return .cell(GridCell(level: level, x: x, y: y))
        case "l":
            let parts = body.split(separator: "_", omittingEmptySubsequences: false)
            guard parts.count == 2, isDecimal(parts[0]), isDecimal(parts[1]), let latitude = Double(parts[0]),
                let longitude = Double(parts[1]),
                let coordinate = try? Coordinate(latitude: latitude, longitude: longitude)
            else { return nil }
            return .location(coordinate)
        case "f":
            guard let dash = body.firstIndex(of: "-"), (1...16).contains(body[..<dash].count),
                body[..<dash].utf8.allSatisfy({ isDigit($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }),
                let bits = UInt64(body[..<dash], radix: 16),
                let id = clusterID(text: body[body.index(after: dash)...]), !id.isElement, id.categoryFilter == nil
            else { return nil }
            return .filtered(id, categories: CategorySet(bits: bits))
        case "p":
            return number(body, as: Int.self).map { .element($0) }
        default:
            return nil
        }
    }

    /// A number of decimal digits alone (no sign), if it fits in `T`.
    private static func number<T: FixedWidthInteger>(_ text: Substring, as type: T.Type) -> T? {
        guard !text.isEmpty, text.utf8.allSatisfy(isDigit) else { return nil }
        return T(text)
    }

    /// Whether a text is a decimal number as Swift writes a `Double`.
    ///
    /// That is a minus sign or none, digits, a fraction or none, an exponent or none (`-33.5`, `1e-05`): no `inf`, `nan`
    /// or hexadecimal, which a page's JavaScript can't read.
    private static func isDecimal(_ text: Substring) -> Bool {
        var rest = text.utf8[...]
        func skip(_ character: Unicode.Scalar) -> Bool {
            guard rest.first == UInt8(ascii: character) else { return false }
            rest = rest.dropFirst()
            return true
        }
        func digits() -> Bool {
            let count = rest.prefix(while: isDigit).count
            rest = rest.dropFirst(count)
            return count > 0
        }
        _ = skip("-")
        guard digits() else { return false }
        if skip("."), !digits() { return false }
        if skip("e") {
            if !skip("-") { _ = skip("+") }
            guard digits() else { return false }
        }
        return rest.isEmpty
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
}
