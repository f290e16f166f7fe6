import Foundation
import ParleyCore
import ParleyTesting
import Testing
@testable import ParleyLocal

@Suite struct PiperSpeechSynthesizerTests {
    /// The voice adds random noise (as Piper does), so a sentence now and then loses a word;
    /// over the ten sentences Whisper hears at least 92% of the words. (Whether it is heard as
    /// well as flite is the `voice` benchmark's figure.)
    @Test func speechRoundTripsThroughWhisper() async throws {
        let recognizer = try TestModels.recognizer()
        var pairs: [(reference: String, hypothesis: String)] = []
        for sentence in TestModels.sentences {
            pairs.append((sentence, try await recognizer.transcribe(try await TestModels.piperSpeech(sentence), isFinal: true).text))
        }
        let (errors, words) = totalWordErrors(pairs)
        #expect(Double(errors) / Double(words) <= 0.08, "\(pairs.map { "\($0.reference) → \($0.hypothesis)" })")
    }

    @Test func eachClauseIsYieldedAsSoonAsItIsMade() async throws {
        let voice = try TestModels.piperVoice()
        #expect(voice.sampleRate == 22_050)
        var chunks: [[Int16]] = []
        for try await chunk in voice.synthesize("Sure. The train to the airport leaves at half past seven, from platform two.", options: SpeechOptions()) {
            chunks.append(chunk)
        }
        // One chunk per clause: "Sure." is spoken, and handed on, on its own.
        #expect(chunks.count == 3)
        let seconds = chunks.map { Double($0.count) / 22_050 }
        #expect(seconds[0] > 0.2 && seconds[0] < 1.2, "\(seconds)")
        #expect(seconds[1] > seconds[0], "\(seconds)")
        #expect(chunks.allSatisfy { $0.contains { abs(Int($0)) > 3_000 } })
    }

    @Test func speedScalesTheDurationAndWordlessTextYieldsNothing() async throws {
        let voice = try TestModels.piperVoice()
        func seconds(_ text: String, speed: Double) async throws -> Double {
            var count = 0
            for try await chunk in voice.synthesize(text, options: SpeechOptions(speed: speed)) { count += chunk.count }
            return Double(count) / Double(voice.sampleRate)
        }
        // The voice's durations are drawn with random noise: compare the means of three each.
        func meanSeconds(speed: Double) async throws -> Double {
            var total = 0.0
            for _ in 0..<3 { total += try await seconds("Please turn off the kitchen lights.", speed: speed) }
            return total / 3
        }
        let normal = try await meanSeconds(speed: 1)
        let fast = try await meanSeconds(speed: 2)
        #expect(fast < normal * 0.7, "normal \(normal) s, fast \(fast) s (means of three)")
        #expect(try await seconds(" ... !? \n\u{7}", speed: 1) == 0)
    }

    @Test func cancellingTheConsumerStopsSynthesis() async throws {
        let voice = try TestModels.piperVoice()
        let long = Array(repeating: "This sentence is one of many in a long reply, and it keeps going.", count: 20).joined(separator: " ")
        let task = Task {
            var chunks = 0
            for try await _ in voice.synthesize(long, options: SpeechOptions()) {
                chunks += 1
                if chunks == 1 { withUnsafeCurrentTask { $0?.cancel() } }
            }
            return chunks
        }
        let result = await task.result
        if case .success(let chunks) = result { #expect(chunks < 40) }
        // The voice still works for the next reply.
        var samples = 0
        for try await chunk in voice.synthesize("Still here.", options: SpeechOptions()) { samples += chunk.count }
        #expect(samples > 5_000)
    }

    @Test func textIsCutIntoClausesWithTheirMarks() {
        let clauses = PiperText.clauses(of: "Hi, it costs 3.5 dollars, e.g. today!\nReally? Yes…  ")
        #expect(clauses == [
            .init(words: "Hi", mark: ","), .init(words: "it costs 3.5 dollars", mark: ","), .init(words: "e.g", mark: "."),
            .init(words: "today", mark: "!"), .init(words: "Really", mark: "?"), .init(words: "Yes", mark: "."),
        ])
        #expect(PiperText.clauses(of: String(repeating: "word ", count: 100)).allSatisfy { $0.words.count <= PiperText.maximumClauseLength })
    }

    @Test func phonemesMapToPiperIDsWithPaddingAndTheVoiceRejectsMissingOrCorruptFiles() async throws {
        let locator = TestModels.locator
        let config = try PiperVoiceConfig(path: locator.path(of: .piperJoe) + ".json")
        // ^ _ h _ ə _ $  (h = 20, ə = 59 in Piper's English map)
        #expect(config.ids(of: "hə") == [1, 0, 20, 0, 59, 0, 2])
        #expect(config.ids(of: "h\u{1F600}") == [1, 0, 20, 0, 2])

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("piper-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = folder.appendingPathComponent("en_US-joe-medium.onnx").path
        let library = try locator.onnxRuntimeLibraryPath()
        #expect(throws: LocalModelError.self) { try PiperSpeechSynthesizer(modelPath: model, onnxRuntimePath: library) }
        try Data("not an onnx file".utf8).write(to: URL(fileURLWithPath: model))
        try FileManager.default.copyItem(atPath: locator.path(of: .piperJoe) + ".json", toPath: model + ".json")
        #expect(throws: LocalModelError.unloadable(kind: "Piper voice", path: model)) {
            try PiperSpeechSynthesizer(modelPath: model, onnxRuntimePath: library)
        }
        #expect(throws: LocalModelError.self) {
            try PiperSpeechSynthesizer(modelPath: locator.path(of: .piperJoe), onnxRuntimePath: folder.appendingPathComponent("libnothing.so").path)
        }

        // A valid ONNX network that is not a Piper voice (one Identity node) is refused at load.
        let identity = folder.appendingPathComponent("identity.onnx").path
        let python = Subprocess()
        python.executableURL = URL(fileURLWithPath: ProcessInfo.processInfo.environment["PARLEY_PYTHON"]
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/parley/venv/bin/python").path)
        python.arguments = ["-c", """
            import onnx, sys
            from onnx import helper, TensorProto
            x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
            y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
            graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "identity", [x], [y])
            onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
            """, identity]
        try python.run()
        #expect(await python.exitStatus(within: .seconds(60)) == 0)
        try FileManager.default.copyItem(atPath: locator.path(of: .piperJoe) + ".json", toPath: identity + ".json")
        #expect(throws: LocalModelError.unloadable(kind: "Piper voice", path: identity)) {
            try PiperSpeechSynthesizer(modelPath: identity, onnxRuntimePath: library)
        }
    }
}

@Suite struct EspeakPhonemizerTests {
    @Test func answersLineByLineWhateverTheTextHolds() throws {
        let phonemizer = EspeakPhonemizer(voice: "en-us")
        #expect(try phonemizer.phonemes(of: "Hello there") == "həlˈoʊ ðˈɛɹ")
        // Line breaks, control characters and the sentinel word cannot end an answer early.
        #expect(try phonemizer.phonemes(of: "Hello\nthere parleysentinel\u{7}") == "həlˈoʊ ðˈɛɹ")
        #expect(try phonemizer.phonemes(of: "!?") == "")
        #expect(try phonemizer.phonemes(of: "Seven") == "sˈɛvən")
    }

    @Test func aMissingProgramIsAClearError() {
        let phonemizer = EspeakPhonemizer(executable: "/nonexistent/espeak-ng", voice: "en-us")
        #expect(throws: ProviderError.self) { try phonemizer.phonemes(of: "Hello") }
        #expect((try? phonemizer.phonemes(of: "Hello")) == nil)
    }
}
