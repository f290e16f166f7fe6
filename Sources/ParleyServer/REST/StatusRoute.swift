import Foundation
import ParleyCore
import ParleyNet

/// `GET /v1/status`: which engines the server runs on — names only, never an endpoint or a
/// key — and the one line the web page shows about them. Open like `/healthz`.
enum StatusRoute {
    struct Status: Encodable {
        struct Engine: Encodable {
            var role: String
            var name: String
            /// The languages a speech engine hears or speaks; absent when it does not say.
            var languages: [String]?
        }

        var status: String
        var providers: [Engine]
        var notice: String?
    }

    static func register(on router: inout Router, context: ServerContext) {
        router.get("/v1/status") { _ in
            guard let providers = context.providers.current else {
                return JSONResponse.ok(Status(status: "starting", providers: [], notice: nil), status: 503)
            }
            return JSONResponse.ok(Status(
                status: "ok", providers: providers.components.map { Status.Engine(role: $0.role, name: $0.name, languages: $0.languages) },
                notice: providers.notice
            ))
        }
    }
}
