import Foundation
import Observation
import ParleyCore

/// A voice-first conversation with a Parley agent, for SwiftUI (or any UI): status, one list
/// of spoken and typed entries, the live caption, the microphone level and the current error
/// in words, with hold-to-talk, hands-free talking, typing and interruption.
///
/// ```swift
/// let tokens = LocalTokenSource(server: URL(string: "http://127.0.0.1:8080")!)
/// let model = ConversationModel(server: tokens.server, token: tokens.fetch, audio: audio)
/// model.connect()
/// model.beginHold()   // touch down on the mic
/// model.endHold()     // release: what was said is sent, the answer streams into `messages`
/// ```
@Observable
@MainActor
public final class ConversationModel {
    /// Tunables of the conversation.
    public struct Options: Sendable {
        /// A hold with less audio than this is a tap: nothing is sent.
        public var minimumUtteranceMilliseconds: Int
        /// Server voice activity detection for hands-free talking.
        public var handsFreeTurnDetection: ServerVADSettings

        /// Creates options.
        public init(
            minimumUtteranceMilliseconds: Int = 150,
            handsFreeTurnDetection: ServerVADSettings = ServerVADSettings(silenceDurationMs: 500)
        ) {
            self.minimumUtteranceMilliseconds = minimumUtteranceMilliseconds
            self.handsFreeTurnDetection = handsFreeTurnDetection
        }
    }

    /// A hold of the talk button, from touch-down until its capture has ended.
    struct Hold {
        enum Phase: Equatable {
            /// The microphone is being started.
            case starting
            /// The microphone is on and the audio goes to the server.
            case capturing
            /// Released: the rest of the audio is flushed, then sent (or thrown away).
            case releasing(send: Bool)
        }

        /// Tells this hold's capture from any earlier or later one.
        let token: Int
        var phase: Phase
    }

    // MARK: Observed state

    /// The entries of the conversation, oldest first.
    public internal(set) var messages: [ConversationMessage] = []
    /// The live caption of what the person is saying right now.
    public internal(set) var partialTranscript = ""
    /// The microphone's smoothed level, 0…1, while it is on.
    public internal(set) var microphoneLevel: Float = 0
    /// Whether the microphone is on.
    public internal(set) var isMicrophoneOn = false
    /// Milliseconds of audio captured in the current hold.
    public internal(set) var capturedMilliseconds = 0
    /// The microphone permission as last seen.
    public internal(set) var microphoneAccess = MicrophoneAccess.undetermined
    /// Whether the person talks hands-free (server turn detection) instead of holding to talk.
    public internal(set) var isHandsFree = false
    /// Where the connection stands.
    public internal(set) var connection = ConversationConnection.idle
    /// The problem to show, if any.
    public internal(set) var error: ConversationError?
    /// Counters for a debug screen and tests.
    public internal(set) var diagnostics = ConversationDiagnostics()

    var hold: Hold?
    var isUserSpeaking = false
    var isPlaying = false
    var awaitingResponse = false
    var activeResponseID: String?

    // MARK: Unobserved state

    /// The realtime client the model talks through.
    @ObservationIgnored public let client: RealtimeClient
    /// The microphone and speaker.
    @ObservationIgnored public let audio: any ConversationAudio
    /// The tunables.
    @ObservationIgnored public let options: Options

    @ObservationIgnored var transcript = ConversationTranscript()
    @ObservationIgnored var discardNextResponse = false
    @ObservationIgnored var captureCount = 0
    @ObservationIgnored var captureTask: Task<Void, Never>?
    @ObservationIgnored var seenEventIDs = BoundedRecentSet<String>(capacity: 512)
    @ObservationIgnored var sentEventTypes: [String: String] = [:]
    @ObservationIgnored var sentEventOrder: [String] = []
    @ObservationIgnored private var errorCount = 0
    @ObservationIgnored private var updatesTask: Task<Void, Never>?
    @ObservationIgnored private var playbackTask: Task<Void, Never>?

    /// Creates a model on a realtime client; call `connect()` to start.
    public init(client: RealtimeClient, audio: any ConversationAudio, options: Options = Options()) {
        self.client = client
        self.audio = audio
        self.options = options
    }

    /// Creates a model for the Parley server at `server` (`http://` or `https://` base URL).
    /// - Parameters:
    ///   - server: the server's base URL, such as `http://127.0.0.1:8080`.
    ///   - agentID: talk to this agent instead of the server's default one.
    ///   - instanceID: join this agent instance (its conversation continues).
    ///   - token: fetches client tokens (see `RealtimeClient.TokenProvider`).
    ///   - audio: captures the microphone and plays the agent's voice.
    ///   - options: how the conversation behaves (see `Options`).
    public convenience init(
        server: URL, agentID: String? = nil, instanceID: String? = nil,
        token: @escaping RealtimeClient.TokenProvider, audio: any ConversationAudio, options: Options = Options()
    ) {
        let configuration = RealtimeClient.Configuration(server: server, agentID: agentID, instanceID: instanceID)
        self.init(client: RealtimeClient(configuration: configuration, token: token), audio: audio, options: options)
    }

    deinit {
        client.stop()
    }

    // MARK: Status

    /// What the conversation is doing, in one word.
    public var status: ConversationStatus {
        ConversationStatus.derive(connection: connection, isListening: isListening, isSpeaking: isPlaying, isThinking: isThinking)
    }

    /// Whether a hold is taking the person's words (or hands-free speech is under way).
    public var isListening: Bool {
        switch hold?.phase {
        case .starting?, .capturing?: true
        case .releasing?: false
        case nil: isHandsFree && isUserSpeaking
        }
    }

    /// Whether the talk button is held.
    public var isHolding: Bool {
        switch hold?.phase {
        case .starting?, .capturing?: true
        case .releasing?, nil: false
        }
    }

    private var isThinking: Bool {
        if awaitingResponse || activeResponseID != nil { return true }
        if case .releasing(send: true)? = hold?.phase { return capturedMilliseconds >= options.minimumUtteranceMilliseconds }
        return false
    }

    // MARK: Connection

    /// Connects, and keeps reconnecting whenever the connection is lost, until `disconnect()`.
    public func connect() {
        guard updatesTask == nil else { return }
        let updates = client.updates
        updatesTask = Task { [weak self] in
            for await update in updates {
                guard let self else { return }
                self.handle(update)
            }
        }
        let playbackEvents = audio.playbackEvents
        playbackTask = Task { [weak self] in
            for await event in playbackEvents {
                guard let self else { return }
                self.handlePlayback(event)
            }
        }
        client.start()
    }

    /// Stops talking and listening and closes the connection for good.
    public func disconnect() {
        if hold != nil { cancelHold() }
        if isHandsFree { setHandsFree(false) }
        _ = audio.stopPlayback()
        isPlaying = false
        client.stop()
        updatesTask?.cancel()
        playbackTask?.cancel()
        transcript.sessionEnded()
        syncMessages()
        connection = .idle
    }

    /// Tries to reconnect now instead of waiting out the backoff.
    public func reconnectNow() {
        client.reconnectNow()
    }

    /// Asks for (or re-reads) the microphone permission, for example when the app starts or
    /// comes back from Settings.
    public func requestMicrophoneAccess() async {
        microphoneAccess = await audio.requestMicrophoneAccess()
        if microphoneAccess == .granted, error?.kind == .microphoneDenied { error = nil }
    }

    // MARK: Typing

    /// Sends a typed message; the answer is spoken like any other. Typing while the agent
    /// speaks interrupts it.
    /// - Returns: `false` when there is nothing to send or no connection (keep the text in
    ///   the composer).
    @discardableResult
    public func send(text: String) -> Bool {
        let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return false }
        guard connection == .ready else { return notSent("Your message was not sent.") }
        interruptAgent()
        let itemID = RealtimeID.item()
        guard send(.conversationItemCreate(item: .message(id: itemID, role: .user, content: [.inputText(text)]))) != nil else { return notSent("Your message was not sent.") }
        send(.responseCreate())
        transcript.addTypedMessage(itemID: itemID, text: text)
        awaitingResponse = true
        syncMessages()
        return true
    }

    // MARK: Key presses

    /// Presses a key of a phone's keypad (`0`–`9`, `*`, `#`, `A`–`D`), as a caller does in a
    /// phone menu: the agent stops speaking, is told "The caller pressed 5." and answers. The
    /// agent must ask for key presses (`"telephony": {"key_press_messages": true}`); otherwise
    /// the server's refusal is shown as an error.
    ///
    /// ```swift
    /// model.pressKey("2")
    /// ```
    /// - Returns: `false` when `key` is not one key of the keypad or there is no connection.
    @discardableResult
    public func pressKey(_ key: String) -> Bool {
        guard PhoneKeypad.isKey(key) else { return false }
        guard connection == .ready else { return notSent("Your key press was not sent.") }
        interruptAgent()
        guard send(.keyPress(key: key)) != nil else { return notSent("Your key press was not sent.") }
        return true
    }

    // MARK: Errors

    /// Hides the current error.
    public func dismissError() {
        error = nil
    }

    func report(_ kind: ConversationError.Kind, _ message: String) {
        errorCount += 1
        error = ConversationError(id: errorCount, kind: kind, message: message)
    }

    /// Reports that what the user did was not sent for want of a connection; returns `false`.
    private func notSent(_ what: String) -> Bool {
        report(.notConnected, "Not connected to Parley right now — reconnecting. \(what)")
        return false
    }

    func clearError(of kinds: Set<ConversationError.Kind>) {
        if let error, kinds.contains(error.kind) { self.error = nil }
    }

    // MARK: Plumbing

    /// Sends a client event, remembering its type so an error about it can be explained.
    @discardableResult
    func send(_ event: RealtimeClientEvent) -> String? {
        guard let eventID = client.send(event) else { return nil }
        let type = event.typeName
        diagnostics.sentEvents[type, default: 0] += 1
        if type != "input_audio_buffer.append" {
            sentEventTypes[eventID] = type
            sentEventOrder.append(eventID)
            if sentEventOrder.count > 64 { sentEventTypes[sentEventOrder.removeFirst()] = nil }
        }
        return eventID
    }

    /// Publishes the transcript's entries when they changed.
    func syncMessages() {
        if messages != transcript.messages { messages = transcript.messages }
    }
}
