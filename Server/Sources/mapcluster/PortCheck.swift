import Foundation

/// Whether the server could listen where it is asked to, found out before anything else takes time.
enum PortCheck {
    /// Why `host`:`port` can't be listened on, in one sentence; `nil` if it can (or for port 0, any free one).
    static func problem(host: String, port: Int) -> String? {
        guard port != 0 else { return nil }
        var hints = addrinfo()
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        hints.ai_flags = AI_PASSIVE
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let address = found else {
            return "Cannot listen on \(host): no such address."
        }
        defer { freeaddrinfo(found) }
        let descriptor = socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        // As the server itself binds: a port left in TIME_WAIT by an earlier run is free.
        var reuse: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        guard bind(descriptor, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 else {
            switch errno {
            case EADDRINUSE:
                return "Port \(port) on \(host) is already in use: stop what uses it, or pick another with --port."
            case EACCES: return "Port \(port) needs more privileges than this user has: pick another with --port."
            case EADDRNOTAVAIL: return "Cannot listen on \(host): it is not an address of this machine."
            default: return "Cannot listen on \(host):\(port): \(String(cString: strerror(errno)))."
            }
        }
        return nil
    }
}
