import Foundation
import HTTPTypes
@_spi(MapClusterServer) import MapClusterIO
import MapClusterLive

/// The body of `POST /api/points/delete`: a list of ids, as `{"ids":[…]}` or `[…]`, each a string or a number.
enum DeleteList {
    /// The keys of the points a body lists, in its order.
    ///
    /// - Throws: A 400 ``RequestError`` that says what is wrong and where (`request body ids[3]: …`).
    static func keys(of body: Data) throws(RequestError) -> [PointKey] {
        guard let text = String(data: body, encoding: .utf8), let document = PropertyValue(jsonText: text) else {
            throw RequestError(.badRequest, "request body is not valid JSON: a list of ids, as {\"ids\":[…]}")
        }
        let ids: [PropertyValue]
        switch document {
        case .array(let list): ids = list
        case .object(let members):
            guard case .array(let list)? = members["ids"] else {
                throw RequestError(.badRequest, "request body (field ids): is missing or not an array")
            }
            ids = list
        default: throw RequestError(.badRequest, "request body: is not a list of ids, as {\"ids\":[…]}")
        }
        var keys: [PointKey] = []
        for (position, id) in ids.enumerated() {
            switch id {
            case .string(let text): keys.append(PointKey(id: text, isNumber: false))
            case .number: keys.append(PointKey(id: id.description, isNumber: true))
            default:
                throw RequestError(.badRequest, "request body ids[\(position)]: is neither a string nor a number")
            }
        }
        return keys
    }
}
