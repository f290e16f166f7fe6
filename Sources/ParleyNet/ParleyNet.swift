/// ParleyNet: HTTP and WebSocket server and clients on libwebsockets, and an HTTP client with
/// Server-Sent Events on URLSession.
public enum ParleyNet {}
