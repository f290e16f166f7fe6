import Foundation
import ParleyNet

/// What an orchestrator or a load balancer asks, open to anyone: `GET /healthz` (liveness: the
/// process serves HTTP, so there is no reason to restart it — also while it loads its models or
/// drains) and `GET /readyz` (readiness: send it sessions; 503 `starting` while the providers
/// load and 503 `draining` once it is shutting down).
enum HealthRoutes {
    static func register(on router: inout Router, context: ServerContext) {
        router.get("/healthz") { _ in JSONResponse.ok(["status": "ok"]) }
        router.get("/readyz") { _ in
            if context.coordinator.isDraining {
                return .error(status: 503, code: "draining", message: "This node is shutting down; use another.")
            }
            return context.providers.current == nil
                ? .error(status: 503, code: "starting", message: "The providers are still loading.")
                : JSONResponse.ok(["status": "ready"])
        }
    }
}
