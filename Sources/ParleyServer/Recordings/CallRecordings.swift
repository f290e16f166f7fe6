import Foundation
import ParleyCore

/// The server's call recordings: one WAV file per conversation in `<data directory>/recordings`,
/// the recorders writing now, and their deletion with their conversation or by
/// `RecordingHousekeeping`.
///
/// A conversation resumed in a later session goes on in the same file. Two sessions on one
/// conversation at once: the second is not recorded (its audio would interleave with the first's).
///
/// `@unchecked Sendable`: `live` is guarded by `lock`.
public final class CallRecordings: @unchecked Sendable {
    /// The folder holding the files.
    public let directory: URL
    /// Whether conversations are recorded when their agent does not say (`PARLEY_RECORDINGS`).
    public let recordsByDefault: Bool
    /// Yields each time a recording is complete; several completions before a read yield once.
    /// Read by one reader only: `RecordingHousekeeping`.
    let completions: AsyncStream<Void>
    private let completed: AsyncStream<Void>.Continuation
    private let log: EventLog
    private let lock = NSLock()
    private var live: [String: CallRecorder] = [:]

    /// Recordings under `dataDirectory/recordings`.
    public init(dataDirectory: URL, recordsByDefault: Bool, log: EventLog) {
        directory = dataDirectory.appendingPathComponent("recordings", isDirectory: true)
        self.recordsByDefault = recordsByDefault
        self.log = log
        (completions, completed) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Starts recording `conversationID` when the agent asks for it (`agentSetting`, or the
    /// server default when the agent does not say); `nil` when it is not to be recorded or cannot be.
    func recorder(
        conversationID: String, agentSetting: Bool?, makeResampler: @escaping @Sendable (Int, Int) -> any Resampler
    ) -> CallRecorder? {
        guard agentSetting ?? recordsByDefault else { return nil }
        guard let url = url(for: conversationID) else {
            log.log("recording.skipped", ["conversation_length": .number(Double(conversationID.utf8.count)), "reason": "id too long for a file name"])
            return nil
        }
        return lock.withLock {
            guard live[conversationID] == nil else {
                log.log("recording.skipped", ["conversation": .string(conversationID), "reason": "already being recorded"])
                return nil
            }
            let recorder: CallRecorder
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                recorder = try CallRecorder(url: url, makeResampler: makeResampler)
            } catch {
                log.log("recording.failed", ["conversation": .string(conversationID), "error": .string("\(error)")])
                return nil
            }
            live[conversationID] = recorder
            Task { [weak self] in
                await recorder.finished()
                self?.ended(conversationID: conversationID, recorder: recorder)
            }
            return recorder
        }
    }

    private func ended(conversationID: String, recorder: CallRecorder) {
        lock.withLock { if live[conversationID] === recorder { live[conversationID] = nil } }
        if let failure = recorder.failure {
            log.log("recording.failed", ["conversation": .string(conversationID), "error": .string(failure.description)])
        }
        completed.yield()
    }

    /// Waits until the recording of `conversationID` being written now (if one is) is complete:
    /// its session has ended and the agent audio still playing then is written.
    public func waitUntilWritten(conversationID: String) async {
        guard let recorder = lock.withLock({ live[conversationID] }) else { return }
        await recorder.finished()
    }

    /// Finishes every recording still being written (at shutdown) and waits until they are complete.
    func finishAll() async {
        for recorder in lock.withLock({ Array(live.values) }) {
            recorder.finish()
            await recorder.finished()
        }
    }

    /// The file of `conversationID`, when it has one.
    func file(conversationID: String) -> RecordingFile? {
        guard let url = url(for: conversationID) else { return nil }
        return RecordingFile(url: url)
    }

    /// Every recording, as conversation id and file.
    func all() -> [(conversationID: String, file: RecordingFile)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.sorted().compactMap { name in
            guard let id = Self.conversationID(fileName: name), let file = RecordingFile(url: directory.appendingPathComponent(name)) else { return nil }
            return (id, file)
        }
    }

    /// Deletes the recording of `conversationID`, after its recorder (if one is writing) has
    /// closed the file. - Returns: whether there was one.
    @discardableResult
    func delete(conversationID: String) async throws -> Bool {
        if let recorder = lock.withLock({ live[conversationID] }) {
            recorder.finish()
            await recorder.finished()
        }
        guard let url = url(for: conversationID), FileManager.default.fileExists(atPath: url.path) else { return false }
        try FileManager.default.removeItem(at: url)
        return true
    }

    /// Removes the recording of `conversationID` unless it is being written now; no recorder
    /// can open it meanwhile. - Returns: whether it was removed (`false` when live or already gone).
    func removeUnlessLive(conversationID: String) throws -> Bool {
        guard let url = url(for: conversationID) else { return false }
        return try lock.withLock {
            guard live[conversationID] == nil else { return false }
            do {
                try FileManager.default.removeItem(at: url)
            } catch CocoaError.fileNoSuchFile {
                return false
            }
            return true
        }
    }

    /// The file name of a conversation: its id when it is made of letters, digits, `_` and `-`,
    /// otherwise `~` and the id's UTF-8 bytes in hex (either way no path can be smuggled in).
    func url(for conversationID: String) -> URL? {
        let isPlain = !conversationID.isEmpty && conversationID.utf8.allSatisfy {
            (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) || $0 == 95 || $0 == 45
        }
        let stem = isPlain ? conversationID : "~" + conversationID.utf8.map { String(format: "%02x", $0) }.joined()
        guard stem.utf8.count <= 240 else { return nil }
        return directory.appendingPathComponent(stem + ".wav")
    }

    /// The conversation id a file name stands for (the inverse of `url(for:)`).
    static func conversationID(fileName: String) -> String? {
        guard fileName.hasSuffix(".wav") else { return nil }
        let stem = String(fileName.dropLast(4))
        guard stem.hasPrefix("~") else { return stem.isEmpty ? nil : stem }
        let hex = Array(stem.utf8.dropFirst())
        guard hex.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: hex.count, by: 2) {
            guard let byte = UInt8(String(decoding: hex[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
