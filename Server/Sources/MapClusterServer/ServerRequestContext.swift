package import Hummingbird
package import NIOCore

/// The context of the server's requests: Hummingbird's, and the client's address (for the rate limit).
package struct ServerRequestContext: RequestContext, RemoteAddressRequestContext {
    /// What every request context has.
    package var coreContext: CoreRequestContextStorage
    /// The address the request came from; `nil` off a socket (in the router's tests).
    package let remoteAddress: SocketAddress?
    /// The connection: what a stopping server closes under a change stream whose client doesn't read.
    let channel: any Channel

    /// The context of a request arriving on a channel.
    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        channel = source.channel
    }
}
