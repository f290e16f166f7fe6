import Foundation
import ParleyNet

/// `GET /metrics`: the Prometheus counters. Open to whoever reaches the port, unless
/// `PARLEY_METRICS_TOKEN` is set: then it takes that token or the server secret as
/// `Authorization: Bearer …`, compared in constant time, and answers anything else with 401.
enum MetricsRoute {
    static func register(on router: inout Router, context: ServerContext) {
        let token = context.settings.metricsToken.map { Data($0.utf8) }
        router.get("/metrics") { request in
            if let token, let refusal = refusal(of: request, token: token, authentication: context.authentication) {
                context.metrics.doorRefused(door: "metrics", reason: refusal)
                return unauthorized()
            }
            return .text(
                context.metrics.prometheusText(providerRestarts: context.providers.current?.restartCount() ?? 0)
                    + (context.traces?.prometheusText ?? ""),
                contentType: "text/plain; version=0.0.4; charset=utf-8"
            )
        }
    }

    /// Why `request` may not read the metrics (`missing_token`, `wrong_token`); `nil` when it may.
    private static func refusal(of request: HTTPRequest, token: Data, authentication: RequestAuthentication) -> String? {
        guard let credential = RequestAuthentication.credential(of: request) else { return "missing_token" }
        let matches = HMACSHA256.constantTimeEquals(Data(credential.utf8), token) || authentication.isServerSecret(credential)
        return matches ? nil : "wrong_token"
    }

    private static func unauthorized() -> HTTPResponse {
        var response = HTTPResponse.error(
            status: 401, code: "unauthorized", message: "/metrics needs 'Authorization: Bearer <PARLEY_METRICS_TOKEN>' (or the server secret)."
        )
        response.headers.add("WWW-Authenticate", #"Bearer realm="metrics""#)
        return response
    }
}
