import Foundation
import ParleyCore
import ParleyNet
import ParleyTesting

#if canImport(Glibc)
import Glibc
#endif

/// The container image `scripts/image` builds, as buildah describes it.
struct ContainerImage: Sendable {
    /// The image's name: `PARLEY_IMAGE`, else what `scripts/image` tags.
    static let name = ProcessInfo.processInfo.environment["PARLEY_IMAGE"] ?? "localhost/parley:latest"
    static let buildah = "/usr/bin/buildah"

    /// The image's Docker-format configuration (`Entrypoint`, `Cmd`, `Env`, `User`, `Healthcheck`…).
    let config: JSONValue

    /// The image, or why it cannot be run here (for the test to say as its skip reason).
    static func locate() async -> Result<ContainerImage, ContainerSkip> {
        guard FileManager.default.isExecutableFile(atPath: buildah) else {
            return .failure(ContainerSkip("\(buildah) is not installed (scripts/image installs it and builds \(name))"))
        }
        guard getuid() == 0 else {
            return .failure(ContainerSkip("buildah run --isolation chroot needs root here, and these tests run as uid \(getuid())"))
        }
        guard let inspected = try? await ChildProcess.run(buildah, ["inspect", "--type", "image", name], deadline: .seconds(60)),
              inspected.status == 0, let description = try? JSONValue(parsing: String(inspected.output.drop { $0 != "{" })),
              let config = description["Docker"]?["config"] else {
            return .failure(ContainerSkip("there is no image \(name) (scripts/image builds it; scripts/test does so when buildah works)"))
        }
        return .success(ContainerImage(config: config))
    }

    /// The command the image runs: its entrypoint followed by its command.
    var command: [String] {
        ((config["Entrypoint"]?.arrayElements ?? []) + (config["Cmd"]?.arrayElements ?? [])).compactMap(\.stringValue)
    }

    /// The value of `variable` in the image's environment.
    func environment(_ variable: String) -> String? {
        (config["Env"]?.arrayElements ?? []).compactMap(\.stringValue)
            .first { $0.hasPrefix(variable + "=") }.map { String($0.dropFirst(variable.count + 1)) }
    }
}

/// Why a container test cannot run here.
struct ContainerSkip: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// One working container of the image, running its command under `buildah run --isolation
/// chroot` on the host's network (chroot isolation keeps no network namespace of its own), its
/// data volume a host folder. Stopped like an orchestrator stops it: SIGTERM to the server.
///
/// `@unchecked Sendable`: `output` is guarded by `lock`.
final class BuildahContainer: @unchecked Sendable {
    let name: String
    let process = Subprocess()
    let baseURL: URL
    /// `--env` arguments: the settings the server runs with, which `exec` passes on too.
    private let environmentArguments: [String]
    private let lock = NSLock()
    private var output = ""

    /// Makes a working container of `image` whose `start()` runs the image's command with
    /// `environment` added to the image's, `volume` mounted at the image's data directory, on
    /// 127.0.0.1:`port`.
    init(_ image: ContainerImage, environment: [String: String], volume: URL, port: Int) async throws {
        let created = try await ChildProcess.run(ContainerImage.buildah, ["from", "--quiet", "--pull=never", ContainerImage.name], deadline: .seconds(120))
        guard created.status == 0, let name = created.output.split(separator: "\n").last.map(String.init) else {
            throw ServerProcessError(description: "buildah from \(ContainerImage.name) failed: \(created.output)")
        }
        self.name = name
        baseURL = URL(string: "http://127.0.0.1:\(port)")!
        let dataDirectory = image.environment("PARLEY_DATA_DIR") ?? "/var/lib/parley"
        environmentArguments = environment.merging(["PARLEY_HOST": "127.0.0.1", "PARLEY_PORT": "\(port)"]) { $1 }
            .sorted { $0.key < $1.key }.flatMap { ["--env", "\($0.key)=\($0.value)"] }
        process.executableURL = URL(fileURLWithPath: ContainerImage.buildah)
        process.arguments = ["run", "--isolation", "chroot", "--volume", "\(volume.path):\(dataDirectory)"]
            + environmentArguments + [name, "--"] + image.command
    }

    /// Starts the image's command: `buildah run`, which lasts as long as the server.
    func start() throws {
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        _ = PipeReader(pipe.fileHandleForReading) { [weak self] data in
            guard let self else { return }
            lock.withLock { output += String(decoding: data, as: UTF8.self) }
        }
    }

    /// What the container printed so far.
    var log: String { lock.withLock { output } }

    /// Waits until `GET /readyz` answers 200 (the models are loaded).
    /// - Throws: when the container exits first or the deadline passes.
    func waitUntilReady(seconds: Double = 180) async throws {
        let url = baseURL.appendingPathComponent("/readyz")
        let ready = await ResourceProbe.eventually(within: seconds) { [self] in
            guard process.isRunning else { return true }
            return (try? await HTTPClient.shared.send(HTTPClient.Request(url: url, idleTimeout: .seconds(5))))?.status == 200
        }
        guard ready, process.isRunning else {
            throw ServerProcessError(description: "the container did not become ready (running: \(process.isRunning)):\n\(log.suffix(3_000))")
        }
    }

    /// Runs `command` in this working container with the server's settings (beside the server,
    /// if it runs, as a health check runs) and returns its exit status and output.
    func exec(_ command: [String]) async throws -> ChildProcess.Result {
        try await ChildProcess.run(
            ContainerImage.buildah, ["run", "--isolation", "chroot"] + environmentArguments + [name, "--"] + command, deadline: .seconds(60)
        )
    }

    /// Sends SIGTERM to the server inside the container (buildah itself would SIGKILL its
    /// child) and returns the exit status of `buildah run`, nil if it did not stop in time.
    func stop(seconds: Double = 60) async -> Int32? {
        guard process.processIdentifier != 0 else { return nil }
        if let server = Self.descendant(of: process.processIdentifier, named: "parley") { kill(server, SIGTERM) }
        let status = await process.exitStatus(within: TestDeadline.seconds(seconds))
        if status == nil { process.signal(SIGKILL) }
        return status
    }

    /// Stops the server if it still runs and removes the working container.
    func remove() async {
        if process.isRunning { _ = await stop() }
        _ = try? await ChildProcess.run(ContainerImage.buildah, ["rm", name], deadline: .seconds(60))
    }

    /// The first process named `name` below `root` in the process tree (from /proc).
    static func descendant(of root: pid_t, named name: String) -> pid_t? {
        var children: [pid_t: [pid_t]] = [:]
        var names: [pid_t: String] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { continue }
            // "pid (comm) state ppid …": the name may hold spaces and parentheses.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 1, let parent = pid_t(fields[1]) else { continue }
            names[pid] = String(stat[stat.index(after: open)..<close])
            children[parent, default: []].append(pid)
        }
        var queue = children[root] ?? []
        while !queue.isEmpty {
            let pid = queue.removeFirst()
            if names[pid] == name { return pid }
            queue += children[pid] ?? []
        }
        return nil
    }
}
