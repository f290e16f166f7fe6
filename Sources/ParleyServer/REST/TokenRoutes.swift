import Foundation
import ParleyNet

/// Minting client tokens: OpenAI's `POST /v1/realtime/client_secrets` shape, Parley's
/// `POST /v1/tokens`, and the local single-user `POST /v1/local/token`.
enum TokenRoutes {
    struct TokenRequest: Decodable {
        var user: String?
        var agentID: String?
        var instanceID: String?
        var ttlSeconds: Double?

        enum CodingKeys: String, CodingKey {
            case user, agentID = "agent_id", instanceID = "instance_id", ttlSeconds = "ttl_seconds"
        }
    }

    /// OpenAI's body (`expires_after`; a `session` is accepted and ignored) and Parley's scope:
    /// the user the secret is for, and the agent or instance it is limited to.
    struct ClientSecretRequest: Decodable {
        struct ExpiresAfter: Decodable { var seconds: Double? }
        var expiresAfter: ExpiresAfter?
        var user: String?
        var agentID: String?
        var instanceID: String?
        enum CodingKeys: String, CodingKey {
            case expiresAfter = "expires_after", user, agentID = "agent_id", instanceID = "instance_id"
        }

        var isScoped: Bool { user != nil || agentID != nil || instanceID != nil }
    }

    struct ClientSecret: Encodable {
        var value: String
        var expiresAt: Int
        /// For the web page's WebRTC calls (local tokens only, when configured).
        var iceServers: [ICEServer]?
        enum CodingKeys: String, CodingKey { case value, expiresAt = "expires_at", iceServers = "ice_servers" }
    }

    struct MintedToken: Encodable {
        var token: String
        var expiresAt: Int
        var user: String
        var agentID: String?
        var instanceID: String?
        enum CodingKeys: String, CodingKey {
            case token, expiresAt = "expires_at", user, agentID = "agent_id", instanceID = "instance_id"
        }
    }

    static func register(on router: inout Router, context: ServerContext) {
        router.post("/v1/tokens") { request in
            if let refusal = context.authentication.requireBackend(request) { return refusal }
            if let refusal = await rateLimit(request, context) { return refusal }
            do throws(BadRequest) {
                let body = try request.jsonBody(TokenRequest.self)
                guard let user = body.user, !user.isEmpty, user.count <= 200 else {
                    throw BadRequest("user: is required (1 to 200 characters)")
                }
                if let ttl = body.ttlSeconds, !(1...ClientTokenAuthority.maximumLifetime).contains(ttl) {
                    throw BadRequest("ttl_seconds: must be from 1 to 86400")
                }
                let minted = context.authentication.authority.mint(
                    subject: user, agentID: body.agentID, instanceID: body.instanceID,
                    lifetime: body.ttlSeconds ?? ClientTokenAuthority.defaultLifetime
                )
                context.log.log("token.minted", ["user_chars": .number(Double(user.count))])
                return JSONResponse.ok(MintedToken(
                    token: minted.token, expiresAt: minted.claims.expiresAt, user: user,
                    agentID: body.agentID, instanceID: body.instanceID
                ), status: 201)
            } catch {
                return error.response
            }
        }

        router.post("/v1/realtime/client_secrets") { request in
            if let refusal = context.authentication.requireBackend(request) { return refusal }
            if let refusal = await rateLimit(request, context) { return refusal }
            do throws(BadRequest) {
                let body = try request.jsonBody(ClientSecretRequest.self, allowEmpty: true)
                let seconds = body.expiresAfter?.seconds ?? ClientTokenAuthority.defaultLifetime
                guard (10...7200).contains(seconds) else { throw BadRequest("expires_after.seconds: must be from 10 to 7200") }
                guard body.isScoped else {
                    let minted = context.authentication.authority.mintCompact(forLocalUser: false, lifetime: seconds)
                    return JSONResponse.ok(ClientSecret(value: minted.token, expiresAt: minted.expiresAt))
                }
                // A scope does not fit a compact token: the secret is a signed token, like `POST /v1/tokens`.
                if let user = body.user, user.isEmpty || user.count > 200 { throw BadRequest("user: must be 1 to 200 characters") }
                let minted = context.authentication.authority.mint(
                    subject: body.user ?? CompactClientToken.Kind.client.subject, agentID: body.agentID, instanceID: body.instanceID,
                    lifetime: seconds
                )
                return JSONResponse.ok(ClientSecret(value: minted.token, expiresAt: minted.claims.expiresAt))
            } catch {
                return error.response
            }
        }

        let localCaller = LocalCallerCheck(settings: context.settings)
        router.post("/v1/local/token") { request in
            if let refusal = localCaller.refusal(of: request) {
                context.metrics.doorRefused(door: "local_token", reason: refusal.reason)
                return .error(status: 403, code: "local_tokens_disabled", message: refusal.message)
            }
            if let refusal = await rateLimit(request, context) { return refusal }
            let minted = context.authentication.authority.mintCompact(forLocalUser: true)
            let iceServers = context.settings.webRTCICEServers
            return JSONResponse.ok(ClientSecret(value: minted.token, expiresAt: minted.expiresAt, iceServers: iceServers.isEmpty ? nil : iceServers))
        }
    }

    /// Takes a token from the caller's bucket (in cluster mode, the one every node shares).
    private static func rateLimit(_ request: HTTPRequest, _ context: ServerContext) async -> HTTPResponse? {
        let allowed: Bool
        do {
            allowed = try await context.coordinator.allowTokenMint(from: request.remoteAddress)
        } catch {
            return .error(status: 503, code: "storage_error", message: "The cluster's database could not be reached to count tokens; try again shortly.")
        }
        guard !allowed else { return nil }
        var response = HTTPResponse.error(status: 429, code: "rate_limited", message: "Too many tokens requested from this address; try again in a minute.")
        response.headers.set("Retry-After", "60")
        return response
    }
}
