import Foundation
import ParleyNet

/// Runs the fake OpenAI-compatible upstream until it is killed; see `FakeUpstreamOptions.usage`.
@main
struct FakeUpstream {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.contains("--help") {
            print(FakeUpstreamOptions.usage)
            return
        }
        let options: FakeUpstreamOptions
        do {
            options = try FakeUpstreamOptions(arguments: arguments)
        } catch {
            FileHandle.standardError.write(Data("FakeUpstream: \(error)\n\(FakeUpstreamOptions.usage)\n".utf8))
            exit(2)
        }
        var configuration = HTTPServer.Configuration(host: options.host, port: options.port)
        configuration.maxRequestBodySize = 32 << 20
        let server = HTTPServer(configuration: configuration, router: FakeUpstreamRoutes(options: options).router())
        do {
            try server.start()
        } catch {
            FileHandle.standardError.write(Data("FakeUpstream: cannot listen on \(options.host):\(options.port): \(error)\n".utf8))
            exit(1)
        }
        // Unbuffered, so a script reading the pipe sees the port at once.
        FileHandle.standardOutput.write(Data("listening on http://\(options.host):\(server.port)/v1\n".utf8))
        while true { try? await Task.sleep(for: .seconds(3_600)) }
    }
}
