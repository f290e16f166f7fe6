import Testing

/// The suites that start a libwebsockets server with TLS, run one at a time. libwebsockets 4.1
/// assigns its global OpenSSL ex-data indexes again whenever a context doing TLS starts, so a
/// handshake under way in another such context can lose its connection's data and fail
/// ("connect SSL err 1"). Parley itself starts one such context (the WebSocket client's).
@Suite(.serialized) enum TLSServerTests {}
