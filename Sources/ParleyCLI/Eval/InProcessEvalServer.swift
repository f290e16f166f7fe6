import Foundation
import ParleyCore
import ParleyServer

/// A Parley server in this process for `parley eval` without `--url`: the engines and
/// `PARLEY_*` settings of `parley serve`, on a loopback port of its own, with a throwaway data
/// directory and secret. Scenarios reach it over the realtime protocol like any server.
struct InProcessEvalServer: Sendable {
    /// How the scenarios reach it.
    let connection: ServerConnection
    private let app: ParleyApp
    private let providers: ProviderSet
    private let dataDirectory: URL

    /// Loads the engines and starts the server.
    /// - Throws: `CommandFailure` when the settings are wrong or an engine cannot load.
    static func start(_ context: CommandContext) async throws -> InProcessEvalServer {
        var settings = try InProcessEngines(context).settings
        settings.host = "127.0.0.1"
        settings.port = 0
        settings.dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-eval-\(UUID().uuidString)", isDirectory: true)
        let secret = "eval-" + UUID().uuidString + UUID().uuidString
        let providers: ProviderSet
        do {
            providers = try await context.withProgress("Loading the engines") { try await ProviderFactory.make(settings) }
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure("\(error)")
        }
        do {
            let app = try ParleyApp(settings: settings, secret: secret, providers: providers, log: .silent)
            try app.start()
            let connection = ServerConnection(baseURL: URL(string: "http://127.0.0.1:\(app.port)")!, credential: secret)
            return InProcessEvalServer(connection: connection, app: app, providers: providers, dataDirectory: settings.dataDirectory)
        } catch {
            await providers.shutdown()
            try? FileManager.default.removeItem(at: settings.dataDirectory)
            throw CommandFailure("cannot start the server in process: \(error)")
        }
    }

    /// Stops the server and its engines and removes its data.
    func stop() async {
        await app.shutdown()
        await providers.shutdown()
        try? FileManager.default.removeItem(at: dataDirectory)
    }
}
