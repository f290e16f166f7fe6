import Foundation
import ParleyCore
import Testing
@testable import ParleyCLI

/// Scenario files: what is read, and hostile files refused with the line and the field named.
@Suite("parley eval scenario files")
struct EvalScenarioFileTests {
    @Test("a file with every kind of turn and expectation reads as written")
    func readsEveryKind() throws {
        let file = try ScenarioDecoder.decode("""
            {
              "$schema": "scenario.schema.json",
              "agent": "agent_front",
              "scenarios": [
                {
                  "name": "books",
                  "session": {"instructions": "Be brief.", "voice": "joe"},
                  "turns": [
                    {"text": "Hi"},
                    {"say": ["I'd like", "a table"], "pause_ms": 800, "voice": "espeak-ng",
                     "expect": {"reply_contains": ["table", "when"], "reply_matches": "\\\\?$", "no_tool_called": true}},
                    {"wav": "yes.wav", "expect": {"tool_called": {"name": "book", "arguments_contain": {"people": 2}},
                                                  "handoff_to": "billing", "reply_started_within_ms": 1500, "interrupted": true}},
                    {"interrupt": "wait", "after_reply_ms": 600},
                    {"keys": "12#", "expect": {"reply_contains": "billing"}},
                    {"keys": "*0ABCD", "inter_key_ms": 0}
                  ],
                  "judge": {"rubric": "Books a table.", "pass_score": 8}
                },
                {"name": "other agent", "agent": "agent_other", "turns": [{"text": "Hello"}]}
              ]
            }
            """, path: "book.json")
        #expect(file.scenarios.count == 2)
        let books = file.scenarios[0]
        #expect(books.agentID == "agent_front")
        #expect(file.scenarios[1].agentID == "agent_other")
        #expect(books.instructions == "Be brief." && books.agentVoice == "joe")
        #expect(books.turns.map(\.input) == [
            .text("Hi"),
            .say(fragments: ["I'd like", "a table"], voice: .espeakNG, pauseMs: 800),
            .wav(path: "yes.wav"),
            .interrupt(words: "wait", voice: nil, afterReplyMs: 600),
            .keys("12#", interKeyMs: 200),
            .keys("*0ABCD", interKeyMs: 0),
        ])
        #expect(books.turns.map(\.line) == [9, 10, 12, 14, 15, 16])
        #expect(books.turns[4].expectations == [.replyContains("billing")])
        #expect(books.turns[4].input.kind == "keys")
        #expect(books.turns[1].expectations == [.replyContains("table"), .replyContains("when"), .replyMatches("\\?$"), .noToolCalled])
        #expect(books.turns[2].expectations == [
            .toolCalled(name: "book", argumentsContain: ["people": .number(2)]), .handoffTo("billing"),
            .replyStartedWithin(milliseconds: 1500), .interrupted(true),
        ])
        #expect(books.judge == JudgeRubric(rubric: "Books a table.", passScore: 8))
    }

    @Test("hostile files are refused with the line and the field", arguments: [
        (#"{"scenarios": [{"name": "a",\#n "turns": [{"text": "hi"}],\#n "extra": 1}]}"#, "f.json:3: scenarios[0].extra: unknown field"),
        ("{\"scenarios\": [\n {\"name\": \"a\", \"turns\": [\n  {\"text\": \"hi\", \"expect\": {\n   \"tool_called\": {\"name\": 7}}}]}]}",
         "f.json:4: scenarios[0].turns[0].expect.tool_called.name: expected a string"),
        ("{\"scenarios\": [{\"name\": \"a\", \"turns\": [\n {\"say\": \"hi\", \"voice\": \"hal\"}]}]}",
         "f.json:2: scenarios[0].turns[0].voice: expected one of piper, flite, espeak-ng"),
        ("{\"scenarios\": [{\"name\": \"a\", \"turns\": [\n {\"say\": \"hi\", \"text\": \"hi\"}]}]}",
         #"f.json:2: scenarios[0].turns[0]: a turn takes one of "say" and "text", not both"#),
        ("{\"scenarios\": [{\"name\": \"a\", \"turns\": [\n {\"expect\": {}}]}]}",
         #"f.json:2: scenarios[0].turns[0]: a turn needs one of "say", "wav", "text", "keys", "interrupt", "backchannel""#),
        ("{\"scenarios\": [{\"name\": \"a\", \"turns\": [\n {\"keys\": \"12x\"}]}]}",
         #"f.json:2: scenarios[0].turns[0].keys: "x" is not a key: expected 1 to 32 keys of a phone's keypad (0-9, *, #, A, B, C or D)"#),
        ("{\"scenarios\": [{\"name\": \"a\", \"turns\": [\n {\"keys\": \"\"}]}]}",
         "f.json:2: scenarios[0].turns[0].keys: expected 1 to 32 keys of a phone's keypad (0-9, *, #, A, B, C or D)"),
        ("{\"scenarios\": [{\"name\": \"a\", \"turns\": [\n {\"keys\": \"\(String(repeating: "1", count: 33))\"}]}]}",
         "f.json:2: scenarios[0].turns[0].keys: expected 1 to 32 keys of a phone's keypad (0-9, *, #, A, B, C or D)"),
        ("{\"scenarios\": [{\"name\": \"a\", \"turns\": [\n {\"keys\": 5}]}]}",
         "f.json:2: scenarios[0].turns[0].keys: expected 1 to 32 keys of a phone's keypad (0-9, *, #, A, B, C or D)"),
        ("{\"scenarios\": [{\"name\": \"a\", \"turns\": [{\"keys\": \"1\",\n \"inter_key_ms\": 5001}]}]}",
         "f.json:2: scenarios[0].turns[0].inter_key_ms: expected a whole number from 0 to 5000"),
        ("{\"scenarios\": [{\"name\": \"a\", \"turns\": [{\"text\": \"hi\",\n \"inter_key_ms\": 100}]}]}",
         "f.json:2: scenarios[0].turns[0].inter_key_ms: unknown field"),
        ("{\"scenarios\": [{\"name\": \"a\", \"turns\": [\n {\"keys\": \"1\", \"text\": \"hi\"}]}]}",
         #"f.json:2: scenarios[0].turns[0]: a turn takes one of "text" and "keys", not both"#),
        ("{\"scenarios\": [{\"name\": \"a\",\n \"turn_detection\": \"vad\", \"turns\": [{\"text\": \"hi\"}]}]}",
         #"f.json:2: scenarios[0].turn_detection: expected "push_to_talk" or "server_vad""#),
        ("{\"scenarios\": [{\"name\": \"a\", \"turn_detection\": \"server_vad\", \"turns\": [{\"text\": \"hi\"},\n {\"backchannel\": \"mm-hm\", \"expect\": {\"interrupted\": false}}]}]}",
         #"f.json:2: scenarios[0].turns[1].expect: a backchannel has no reply of its own: expect "interrupted": false on the turn it is spoken over"#),
        ("{\"scenarios\": [{\"name\": \"a\", \"turn_detection\": \"server_vad\", \"turns\": [\n {\"backchannel\": \"mm-hm\"}]}]}",
         "f.json:2: scenarios[0].turns[0].backchannel: the first turn has no reply to speak over"),
        ("{\"scenarios\": [{\"name\": \"a\", \"turns\": [\n {\"interrupt\": \"stop\"}]}]}",
         "f.json:2: scenarios[0].turns[0].interrupt: the first turn has no reply to interrupt"),
        ("{\"scenarios\": [{\"name\": \"a\", \"turns\": [\n {\"text\": \"hi\", \"expect\": {\"interrupted\": true}}]}]}",
         #"f.json:2: scenarios[0].turns[0].expect.interrupted: true needs the next turn to be an "interrupt""#),
        ("{\"scenarios\": [{\"name\": \"a\", \"turns\": [{\"text\": \"hi\",\n \"expect\": {\"reply_matches\": \"(\"}}]}]}",
         "f.json:2: scenarios[0].turns[0].expect.reply_matches: not a regular expression"),
        ("{\"scenarios\": [{\"name\": \"a\", \"turns\": [{\"say\": [\"a\", \"b\"],\n \"pause_ms\": -5}]}]}",
         "f.json:2: scenarios[0].turns[0].pause_ms: expected a whole number from 0 to 60000"),
        ("{\"scenarios\": [{\"name\": \"a\", \"turns\": [{\"text\": \"hi\"}]},\n{\"name\": \"a\", \"turns\": [{\"text\": \"hi\"}]}]}",
         "f.json:2: scenarios[1].name: another scenario is named 'a'"),
        ("{\"scenarios\": [{\"name\": \"a\", \"turns\": [{\"text\": \"hi\"}],\n \"judge\": {\"rubric\": \"x\", \"pass_score\": 11}}]}",
         "f.json:2: scenarios[0].judge.pass_score: expected a number from 0 to 10"),
        ("{\"scenarios\": []}", "f.json:1: scenarios: expected at least one scenario"),
        ("{\"scenario\": []}", "f.json:1: scenarios: missing (expected a list of scenarios)"),
        ("{\"scenarios\": [{\"name\": \"a\", \"turns\": [{\"text\": \"hi\"}]}],\n \"agents\": 1}", "f.json:2: agents: unknown field"),
        ("[1, 2]", "f.json:1: expected an object"),
        ("{\"scenarios\": [\n{\"name\": \"a\",\n \"turns\": [}\n]}", "f.json:3: not JSON: expected a value"),
        ("{\"scenarios\": [\n{\"name\": \"a\" \"turns\": []}]}", #"f.json:2: not JSON: expected ',' or '}' after the value of "name""#),
        ("{\"a\": \"open\n}", "f.json:1: not JSON: a string runs past the end of its line"),
        (String(repeating: "[", count: 100), "f.json:1: not JSON: nested deeper than 64 levels"),
    ])
    func refused(text: String, message: String) {
        #expect(throws: Error.self) { try ScenarioDecoder.decode(text, path: "f.json") }
        do {
            _ = try ScenarioDecoder.decode(text, path: "f.json")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test("the command refuses a bad file with one line and exit 1, before reaching any server")
    func commandRefusesBadFile() async throws {
        let work = try TemporaryDirectory()
        defer { work.remove() }
        try """
            {"scenarios": [
              {"name": "checkout", "turns": [
                {"text": "I want to pay"},
                {"text": "Card ending 42",
                 "expect": {"tool_called": {"name": ["charge"]}}}
              ]}
            ]}
            """.write(toFile: work.path("checkout.json"), atomically: true, encoding: .utf8)
        let run = await CommandRun.run(["eval", "checkout.json", "--url", "http://127.0.0.1:9"], environment: ["PARLEY_SERVER_SECRET": "s"], directory: work.url)
        #expect(run.status == 1)
        #expect(run.output.isEmpty)
        #expect(run.errorOutput == "error: checkout.json:5: scenarios[0].turns[1].expect.tool_called.name: expected a string\n")
        try "{\"scenarios\": [{\"name\": \"a\", \"turns\": [\n {\"wav\": \"question.wav\"}]}]}".write(toFile: work.path("wav.json"), atomically: true, encoding: .utf8)
        let missingRecording = await CommandRun.run(["eval", "wav.json", "--url", "http://127.0.0.1:9"], environment: ["PARLEY_SERVER_SECRET": "s"], directory: work.url)
        #expect(missingRecording.errorOutput == "error: wav.json:2: scenarios[0].turns[0].wav: no such file question.wav\n")
        let missing = await CommandRun.run(["eval", "nowhere.json", "--url", "http://127.0.0.1:9"], environment: ["PARLEY_SERVER_SECRET": "s"], directory: work.url)
        #expect(missing.errorOutput == "error: nowhere.json: no such file\n")
    }
}
