import Foundation
import ParleyCore
import ParleyNet
import ParleyServer
import ParleyTesting

/// A Parley server with its SIP door open on a free port, and what SIP tests read of it.
struct SIPTestServer {
    let server: TestServer
    let logs: SIPLogLines
    var sipPort: Int { server.app.sipPort ?? 0 }

    /// Starts a server whose SIP door admits `trunks` (loopback by default) and, when given, digest `credentials`.
    /// - Parameter languageModel: the agent's model, when not the keyword one (which answers "Hello from Parley.").
    /// - Parameter configure: further settings.
    static func start(
        trunks: [String] = ["127.0.0.1"], credentials: (username: String, password: String)? = nil, languageModel: (any LanguageModel)? = nil,
        configure: (inout ServerSettings) -> Void = { _ in }
    ) throws -> SIPTestServer {
        let logs = SIPLogLines()
        var providers = TwilioCallTests.providers()
        if let languageModel { providers.languageModel = languageModel }
        let server = try TestServer.start(providers: providers, log: logs.log) { settings in
            settings.sip.port = 0
            settings.sip.trunks = trunks.map { try! IPAddressRange($0) }
            settings.sip.credentials = credentials.map { .init(username: $0.username, password: $0.password) }
            configure(&settings)
        }
        return SIPTestServer(server: server, logs: logs)
    }

    /// The conversation a call was stored in, once the call ended.
    func storedItems(ofCall callID: String) async throws -> [ChatMessage] {
        guard let started = logs.lines(of: "sip.call_started").first(where: { $0["session"]?.stringValue == callID }),
              let conversationID = started["conversation"]?.stringValue else { return [] }
        return try await server.app.context.store.items(conversationID: conversationID).map(\.message)
    }

    /// The server's `parley_door_refusals_total` for the SIP door and `reason`.
    func refusals(_ reason: String) -> Int {
        let text = server.app.context.metrics.prometheusText()
        let prefix = "parley_door_refusals_total{door=\"sip\",reason=\"\(reason)\"} "
        return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Int($0.dropFirst(prefix.count)) } ?? 0
    }

    func stop() async { await server.stop() }
}

/// The server's log lines, awaited by event name. `@unchecked Sendable`: `lines` and `waiters` are guarded by `lock`.
final class SIPLogLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [JSONValue] = []
    private var waiters: [(event: String, matches: @Sendable (JSONValue) -> Bool, continuation: CheckedContinuation<JSONValue?, Never>)] = []

    var log: EventLog {
        EventLog { [self] line in
            guard let json = try? JSONValue(parsing: line) else { return }
            let woken: [CheckedContinuation<JSONValue?, Never>] = lock.withLock {
                lines.append(json)
                let name = json["event"]?.stringValue
                let matching = waiters.filter { $0.event == name && $0.matches(json) }.map(\.continuation)
                waiters.removeAll { $0.event == name && $0.matches(json) }
                return matching
            }
            for continuation in woken { continuation.resume(returning: json) }
        }
    }

    /// Every event name logged, in order (for failure messages).
    var eventNames: [String] { lock.withLock { lines.compactMap { $0["event"]?.stringValue } } }

    func lines(of event: String) -> [JSONValue] { lock.withLock { lines.filter { $0["event"]?.stringValue == event } } }

    /// The first line of `event` that `matches` (already logged or a later one), or `nil` after `seconds`.
    func first(_ event: String, matching matches: @escaping @Sendable (JSONValue) -> Bool = { _ in true }, within seconds: Double = 30) async -> JSONValue? {
        return await withTaskGroup(of: JSONValue?.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let existing: JSONValue? = self.lock.withLock {
                        if let line = self.lines.first(where: { $0["event"]?.stringValue == event && matches($0) }) { return line }
                        self.waiters.append((event, matches, continuation))
                        return nil
                    }
                    if let existing { continuation.resume(returning: existing) }
                }
            }
            group.addTask { try? await Task.sleep(for: TestDeadline.seconds(seconds)); return nil }
            let first = await group.next() ?? nil
            group.cancelAll()
            if first == nil { self.wakeAll(event) }
            return first
        }
    }

    /// Resumes every waiter of `event` empty-handed (its deadline passed).
    private func wakeAll(_ event: String) {
        let woken = lock.withLock {
            let matching = waiters.filter { $0.event == event }.map(\.continuation)
            waiters.removeAll { $0.event == event }
            return matching
        }
        for continuation in woken { continuation.resume(returning: nil) }
    }
}

/// SIPp (Debian's `sip-tester`) running one scenario against the SIP door.
enum SIPp {
    /// Runs `scenario` (SIPp XML) once against `port`; SIPp's exit status 0 means every step happened as written.
    static func run(_ scenario: String, port: Int, service: String = "+14155550123", extraArguments: [String] = [], deadline: Double = 60) async throws -> ChildProcess.Result {
        try await launch(scenario, arguments: ["127.0.0.1:\(port)", "-p", "\(try freeUDPPort())", "-s", service] + extraArguments, deadline: deadline)
    }

    /// Plays `scenario` (SIPp XML, beginning with a `recv`) once for the first call to `port` on loopback.
    static func serve(_ scenario: String, port: Int, extraArguments: [String] = [], deadline: Double = 60) async throws -> ChildProcess.Result {
        try await launch(scenario, arguments: ["-p", "\(port)"] + extraArguments, deadline: deadline)
    }

    private static func launch(_ scenario: String, arguments: [String], deadline: Double) async throws -> ChildProcess.Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-sipp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("scenario.xml")
        try Data(scenario.utf8).write(to: file)
        let result = try await ChildProcess.run("/usr/bin/sipp", arguments + [
            "-sf", file.path, "-m", "1", "-i", "127.0.0.1", "-mi", "127.0.0.1", "-mp", "\(try freeUDPPort())",
            "-timeout", "\(Int(deadline * TestDeadline.scale))s", "-timeout_error", "-nostdin", "-max_recv_loops", "1000",
            "-trace_err", "-error_file", directory.appendingPathComponent("errors.log").path,
        ] + (arguments.contains("-t") ? [] : ["-t", "u1"]), deadline: TestDeadline.seconds(deadline + 10))
        let errors = (try? String(contentsOf: directory.appendingPathComponent("errors.log"), encoding: .utf8)) ?? ""
        return ChildProcess.Result(status: result.status, output: result.output + errors)
    }

    /// A UDP port free now (SIPp's media port cannot be chosen by the system).
    static func freeUDPPort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// An SDP offer of `formats` (`m=` payload types, then their `a=rtpmap` lines).
    static func offer(payloadTypes: String, rtpmaps: [String]) -> String {
        """
        v=0
        o=sipp 1 1 IN IP4 [local_ip]
        s=-
        c=IN IP4 [media_ip]
        t=0 0
        m=audio [media_port] RTP/AVP \(payloadTypes)
        \(rtpmaps.map { "a=rtpmap:\($0)" }.joined(separator: "\n"))
        """
    }

    /// The INVITE of a scenario (`authentication` adds SIPp's answer to the last challenge; `headers` are more header lines).
    static func invite(sdp: String, cseq: Int = 1, authentication: Bool = false, headers: [String] = []) -> String {
        """
          <send retrans="500">
            <![CDATA[
              INVITE sip:[service]@[remote_ip]:[remote_port] SIP/2.0
              Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
              From: sipp <sip:+15005550006@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
              To: <sip:[service]@[remote_ip]:[remote_port]>
              Call-ID: [call_id]
              CSeq: \(cseq) INVITE
              Contact: sip:sipp@[local_ip]:[local_port]
              Max-Forwards: 70\(authentication ? "\n              [authentication]" : "")\(headers.map { "\n              " + $0 }.joined())
              Content-Type: application/sdp
              Content-Length: [len]

              \(sdp.split(separator: "\n").joined(separator: "\n      "))
            ]]>
          </send>
        """
    }

    /// The ACK of a final failure, in the INVITE's transaction.
    static func failureACK(cseq: Int = 1) -> String {
        """
          <send>
            <![CDATA[
              ACK sip:[service]@[remote_ip]:[remote_port] SIP/2.0
              [last_Via:]
              [last_From:]
              [last_To:]
              Call-ID: [call_id]
              CSeq: \(cseq) ACK
              Max-Forwards: 70
              Content-Length: 0

            ]]>
          </send>
        """
    }

    /// The ACK of a `200 OK`, a request of the dialog.
    static func successACK(cseq: Int = 1) -> String {
        """
          <send>
            <![CDATA[
              ACK [next_url] SIP/2.0
              Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
              [last_From:]
              [last_To:]
              Call-ID: [call_id]
              CSeq: \(cseq) ACK
              Max-Forwards: 70
              Content-Length: 0

            ]]>
          </send>
        """
    }

    /// An INVITE offering `sdp`, answered (`100` and `180` optional, then `200`) and acknowledged:
    /// how every answered call's scenario starts.
    static func answeredInvite(sdp: String, headers: [String] = []) -> String {
        [
            invite(sdp: sdp, headers: headers),
            #"<recv response="100" optional="true"/>"#,
            #"<recv response="180" optional="true"/>"#,
            #"<recv response="200" rrs="true"/>"#,
            successACK(),
        ].joined(separator: "\n")
    }

    /// A call answered, held for `milliseconds`, then ended by the caller's `BYE`.
    static func heldCall(sdp: String, milliseconds: Int) -> String {
        scenario(answeredInvite(sdp: sdp), #"<pause milliseconds="\#(milliseconds)"/>"#, bye(cseq: 2))
    }

    /// A request of the dialog (`BYE`) and its `200 OK`.
    static func bye(cseq: Int) -> String {
        """
          <send retrans="500">
            <![CDATA[
              BYE [next_url] SIP/2.0
              Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
              [last_From:]
              [last_To:]
              Call-ID: [call_id]
              CSeq: \(cseq) BYE
              Max-Forwards: 70
              Content-Length: 0

            ]]>
          </send>
          <recv response="200" crlf="true"/>
        """
    }

    /// A scenario of `steps`.
    static func scenario(_ steps: String...) -> String {
        """
        <?xml version="1.0" encoding="ISO-8859-1" ?>
        <!DOCTYPE scenario SYSTEM "sipp.dtd">
        <scenario name="parley">
        \(steps.joined(separator: "\n"))
        </scenario>
        """
    }
}

/// baresip (from Debian) as a phone that calls or answers: a WAV as its microphone, what it
/// hears dumped to WAV files, hung up through its `ctrl_tcp` control socket.
struct BaresipPhone {
    let directory: URL
    let controlPort: Int
    /// What baresip prints, as it prints it.
    let output = BaresipOutput()

    /// A configuration that plays `microphone` (8 kHz) into the call and dumps what it hears;
    /// with `opus`, baresip offers Opus first (its microphone file then has to be 48 kHz stereo).
    /// - Parameters:
    ///   - user: the account's user, which calls to it name.
    ///   - listenPort: the SIP port (UDP and TCP) it answers on; any free one when `nil`.
    ///   - autoAnswer: whether it answers incoming calls at once.
    init(microphone: [Int16], opus: Bool = false, user: String = "caller", listenPort: Int? = nil, autoAnswer: Bool = false) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-baresip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("heard"), withIntermediateDirectories: true)
        let file = opus
            ? WAVFile.pcm16Data(samples: microphone.flatMap { [Int16](repeating: $0, count: 12) }, format: AudioFormat(sampleRate: 48_000, channelCount: 2))
            : WAVFile.pcm16Data(samples: microphone, format: AudioFormat(sampleRate: 8_000))
        try file.write(to: directory.appendingPathComponent("microphone.wav"))
        let codec = opus ? "opus/48000/2" : "PCMU"
        controlPort = try Self.freeTCPPort()
        let config = """
            poll_method epoll
            sip_listen 127.0.0.1:\(listenPort ?? 0)
            audio_player aubridge,parley
            audio_source aufile,\(directory.appendingPathComponent("microphone.wav").path)
            audio_alert aubridge,parley
            rtp_ports 30000-40000
            module_path /usr/lib/baresip/modules
            module g711.so
            module opus.so
            module aufile.so
            module aubridge.so
            module sndfile.so
            module_app account.so
            module_app menu.so
            module_app ctrl_tcp.so
            ctrl_tcp_listen 127.0.0.1:\(controlPort)
            snd_path \(directory.appendingPathComponent("heard").path)
            """
        try Data(config.utf8).write(to: directory.appendingPathComponent("config"))
        let account = "<sip:\(user)@127.0.0.1>;regint=0;audio_codecs=\(codec)\(autoAnswer ? ";answermode=auto" : "")\n"
        try Data(account.utf8).write(to: directory.appendingPathComponent("accounts"))
    }

    /// Calls `uri`, waits for `hangUpWhen`, hangs up and waits for baresip to quit; its output.
    func call(_ uri: String, hangUpWhen: () async -> Bool, deadline: Double = 60) async throws -> String {
        try await run(["-e", "/dial \(uri)"], hangUpWhen: hangUpWhen, deadline: deadline)
    }

    /// Waits for calls (answered at once with `autoAnswer`) until `hangUpWhen`, hangs up and
    /// waits for baresip to quit; its output.
    func answer(hangUpWhen: () async -> Bool, deadline: Double = 60) async throws -> String {
        try await run([], hangUpWhen: hangUpWhen, deadline: deadline)
    }

    private func run(_ arguments: [String], hangUpWhen: () async -> Bool, deadline: Double) async throws -> String {
        let process = Subprocess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/baresip")
        process.arguments = ["-f", directory.path, "-t", "\(Int(deadline * TestDeadline.scale))"] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let reader = PipeReader(pipe.fileHandleForReading) { output.append($0) }
        if await hangUpWhen() { command(#"{"command":"hangup","params":"","token":"1"}"#) }
        command(#"{"command":"quit","params":"","token":"2"}"#)
        // baresip quits at once when told; one that did not hear it is stopped rather than waited for to its own deadline.
        if await process.exitStatus(within: TestDeadline.seconds(10)) == nil { process.terminate() }
        await reader.end()
        return output.text
    }


    /// Sends one command to baresip's control socket (a netstring of JSON); a baresip that is
    /// gone already shows in its output.
    private func command(_ json: String) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(controlPort).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return }
        let message = Array("\(json.utf8.count):\(json),".utf8)
        _ = message.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    /// A port free now on UDP and TCP, with the next one free on TCP: baresip's SIP listens on
    /// UDP and TCP at the port, and SIP over TLS at the next one.
    static func freeSIPPort() throws -> Int {
        for _ in 0..<20 {
            let port = try SIPp.freeUDPPort()
            if port < 65_535, isFreeTCPPort(port), isFreeTCPPort(port + 1) { return port }
        }
        throw CancellationError()
    }

    /// Whether TCP `port` on loopback can be bound now.
    private static func isFreeTCPPort(_ port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    /// A TCP port free now.
    static func freeTCPPort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// What baresip heard (decoded), as samples in [-1, 1].
    func heard() throws -> [Float] {
        let files = try FileManager.default.contentsOfDirectory(at: directory.appendingPathComponent("heard"), includingPropertiesForKeys: nil)
        guard let decoded = files.first(where: { $0.lastPathComponent.hasSuffix("-dec.wav") }) else { return [] }
        return try WAVFile.read(Data(contentsOf: decoded)).samples
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}

/// A baresip's output, awaited for a line. `@unchecked Sendable`: `text` and `waiters` are guarded by `lock`.
final class BaresipOutput: @unchecked Sendable {
    private let lock = NSLock()
    private var collected = ""
    private var waiters: [(needle: String, continuation: CheckedContinuation<Bool, Never>)] = []

    var text: String { lock.withLock { collected } }

    func append(_ chunk: Data) {
        let woken: [CheckedContinuation<Bool, Never>] = lock.withLock {
            collected += String(decoding: chunk, as: UTF8.self)
            let matching = waiters.filter { collected.contains($0.needle) }
            waiters.removeAll { collected.contains($0.needle) }
            return matching.map(\.continuation)
        }
        for continuation in woken { continuation.resume(returning: true) }
    }

    /// Whether baresip printed `needle` (already, or within `seconds`).
    func shows(_ needle: String, within seconds: Double = 30) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let already: Bool = self.lock.withLock {
                        if self.collected.contains(needle) { return true }
                        self.waiters.append((needle, continuation))
                        return false
                    }
                    if already { continuation.resume(returning: true) }
                }
            }
            group.addTask { try? await Task.sleep(for: TestDeadline.seconds(seconds)); return false }
            let shown = await group.next() ?? false
            group.cancelAll()
            if !shown {
                let waiting = self.lock.withLock {
                    defer { self.waiters.removeAll { $0.needle == needle } }
                    return self.waiters.filter { $0.needle == needle }.map(\.continuation)
                }
                for continuation in waiting { continuation.resume(returning: false) }
            }
            return shown
        }
    }
}
