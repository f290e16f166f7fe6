import CLibWebsockets
import Foundation

/// A libwebsockets context that only makes outgoing connections, with one protocol whose
/// callback finds its owner through `lws_context_user`.
enum LWSClientContext {
    /// lws' protocol callback: connection, reason, per-connection data, input, length.
    typealias Callback = @convention(c) (OpaquePointer?, lws_callback_reasons, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, Int) -> Int32

    /// Creates the context on `eventLoop`; `nil` when libwebsockets cannot. The returned
    /// protocol table must live as long as the context.
    /// - Parameters:
    ///   - protocolName: a C string that lives as long as the context.
    ///   - owner: what `lws_context_user` returns in the callback (unretained).
    ///   - options: `LWS_SERVER_OPTION_*` flags.
    static func create(
        protocolName: UnsafePointer<CChar>, callback: Callback, owner: UnsafeMutableRawPointer, options: UInt64 = 0,
        eventLoop: EventLoop
    ) -> (context: OpaquePointer, protocols: UnsafeMutablePointer<lws_protocols>)? {
        LWSLogging.configure()
        // One protocol and the zeroed entry that ends the table.
        let protocols = UnsafeMutablePointer<lws_protocols>.allocate(capacity: 2)
        protocols.initialize(repeating: lws_protocols(), count: 2)
        protocols[0].name = protocolName
        protocols[0].callback = callback
        protocols[0].rx_buffer_size = 64 << 10

        var info = lws_context_creation_info()
        info.port = -1  // CONTEXT_PORT_NO_LISTEN
        info.protocols = UnsafePointer(protocols)
        info.options = options
        info.user = owner
        info.pt_serv_buf_size = 64 << 10
        info.connect_timeout_secs = 10
        eventLoop.adopt(&info)
        guard let context = lws_create_context(&info) else {
            protocols.deinitialize(count: 2)
            protocols.deallocate()
            return nil
        }
        return (context, protocols)
    }
}
