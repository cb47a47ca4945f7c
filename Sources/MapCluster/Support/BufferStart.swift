extension UnsafeBufferPointer {
    /// The address of the first element, of a buffer that is never empty (rows of aggregates, their stored values).
    @inline(__always) var start: UnsafePointer<Element> {
        guard let baseAddress else { preconditionFailure("the buffer is never empty") }
        return baseAddress
    }
}

extension UnsafeMutableBufferPointer {
    /// The address of the first element, of a buffer that is never empty (rows of aggregates, their stored values).
    @inline(__always) var start: UnsafeMutablePointer<Element> {
        guard let baseAddress else { preconditionFailure("the buffer is never empty") }
        return baseAddress
    }
}
