import Foundation
import ParleyCore
import ParleySIP

/// Answering-machine detection on a call Parley placed (`machine_detection` in `POST /v1/calls`):
/// the first seconds of the answer decide (`AnsweringMachineDetector`) before any session hears
/// them. A person, or no verdict, gets the session, with what was heard handed to it first; a
/// machine is hung up on, or after its beep gets the message spoken (the server's voice) and then
/// hung up on.
struct SIPMachineDetection: Sendable {
    /// What to do when a machine answers.
    enum Action: String, Sendable {
        case hangUp = "hang_up"
        case leaveMessage = "leave_message"
    }

    /// How the detection went.
    enum Outcome: Sendable {
        /// A person (`human`) or nobody could tell (`unknown`): the session takes the call, hearing `heard` first.
        case person(answeredBy: String, heard: [Int16])
        /// A machine: the call is over, with or without the message.
        case machine(messageLeft: Bool)
        /// The call ended while it was listened to.
        case ended
    }

    /// The longest message.
    static let longestMessage = 1_000
    /// How long a machine's beep is waited for after its greeting, in audio time, before the message is spoken anyway.
    static let beepWait: Duration = .seconds(15)
    /// The longest the detection and the message may take together: a callee whose audio stops
    /// (no RTP, no audio time) is hung up on then.
    static let longestDetection: Duration = .seconds(90)

    var action: Action
    /// What is said to a machine (`leaveMessage`).
    var message: String?

    /// The detection asked for in a request body's `machine_detection`, or why it cannot be taken.
    static func parse(_ value: JSONValue?) -> Result<SIPMachineDetection?, RequestProblem> {
        guard let value else { return .success(nil) }
        guard let action = value["action"]?.stringValue.flatMap(Action.init(rawValue:)) else {
            return .failure(RequestProblem("'machine_detection.action' must be \"hang_up\" or \"leave_message\"."))
        }
        let message = value["message"]?.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines)
        if action == .leaveMessage {
            guard let message, !message.isEmpty, message.count <= longestMessage else {
                return .failure(RequestProblem("'machine_detection.message' is required with \"leave_message\": the words to say, at most \(longestMessage) characters."))
            }
        }
        return .success(SIPMachineDetection(action: action, message: message))
    }

    /// Why a request's `machine_detection` cannot be taken.
    struct RequestProblem: Error {
        var message: String
        init(_ message: String) { self.message = message }
    }

    /// Listens to the answered `call` until it can tell who answered, and deals with a machine;
    /// `providers` speak the message.
    func run(on call: SIPCall, providers: ProviderSet?) async -> Outcome {
        let watchdog = Task {
            guard (try? await Task.sleep(for: Self.longestDetection)) != nil else { return }
            call.hangUp()
        }
        defer { watchdog.cancel() }
        var detector = AnsweringMachineDetector()
        var events = call.events.makeAsyncIterator()
        var frames = FrameSplitter(frameSamples: call.sampleRate / 50)
        var heard: [Int16] = []
        listening: while let event = await events.next() {
            switch event {
            case .audio(let samples):
                heard += samples
                for frame in frames.split(samples) {
                    switch detector.frame(frame, sampleRate: call.sampleRate) {
                    case .listening: continue
                    case .human: return .person(answeredBy: "human", heard: heard)
                    case .unknown: return .person(answeredBy: "unknown", heard: heard)
                    case .machine: break listening
                    }
                }
            case .ended:
                return .ended
            default:
                continue
            }
        }
        guard action == .leaveMessage, let message, let providers else {
            call.hangUp()
            return .machine(messageLeft: false)
        }
        // The message goes after the beep (or once the wait for it is over).
        var waited: Duration = .zero
        waiting: while waited < Self.beepWait, let event = await events.next() {
            switch event {
            case .audio(let samples):
                for frame in frames.split(samples) {
                    waited += .milliseconds(20)
                    if detector.beepHeard(frame, sampleRate: call.sampleRate) { break waiting }
                }
            case .ended:
                return .ended
            default:
                continue
            }
        }
        guard await speak(message, on: call, providers: providers) else { return .ended }
        while let event = await events.next() {
            if case .outputStopped(Self.messageID) = event { break }
            if case .ended = event { return .ended }
        }
        call.hangUp()
        return .machine(messageLeft: true)
    }

    private static let messageID = "machine_message"

    /// Queues `text` in the server's voice on `call`; `false` when it could not be synthesised.
    private func speak(_ text: String, on call: SIPCall, providers: ProviderSet) async -> Bool {
        var resampler = providers.makeResampler(providers.synthesizer.sampleRate, call.sampleRate)
        var samples: [Int16] = []
        do {
            for try await chunk in providers.synthesizer.synthesize(text, options: SpeechOptions()) {
                samples += SampleConversion.pcm16(resampler.process(SampleConversion.float(chunk)))
            }
        } catch {
            call.hangUp()
            return false
        }
        samples += SampleConversion.pcm16(resampler.flush())
        call.enqueueAudio(samples, responseID: Self.messageID, itemID: Self.messageID)
        call.flushAudio(responseID: Self.messageID, itemID: Self.messageID)
        return true
    }
}

/// Cuts a stream of samples into whole frames, keeping the rest for the next chunk.
private struct FrameSplitter {
    let frameSamples: Int
    private var rest: [Int16] = []

    init(frameSamples: Int) { self.frameSamples = max(frameSamples, 1) }

    mutating func split(_ samples: [Int16]) -> [[Int16]] {
        rest += samples
        let count = rest.count / frameSamples
        let frames = (0..<count).map { Array(rest[$0 * frameSamples..<($0 + 1) * frameSamples]) }
        rest.removeFirst(count * frameSamples)
        return frames
    }
}
