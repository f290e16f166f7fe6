// swift-tools-version:6.0
// Parley — a self-hostable, voice-first AI agent stack. See README.md and ../shared/DESIGN.md.
import PackageDescription

/// A system-library target: a module map and a shim header for one C library from the OS.
func cLibrary(_ name: String, pkgConfig: String? = nil, apt: [String], brew: [String]) -> Target {
    .systemLibrary(
        name: name,
        path: "Sources/CLibraries/\(name)",
        pkgConfig: pkgConfig,
        providers: [.apt(apt), .brew(brew)]
    )
}

let package = Package(
    name: "Parley",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "ParleyCore", targets: ["ParleyCore"]),
        .library(name: "ParleyNet", targets: ["ParleyNet"]),
        .library(name: "ParleyOpenAI", targets: ["ParleyOpenAI"]),
        .library(name: "ParleyLocal", targets: ["ParleyLocal"]),
        .library(name: "ParleyStore", targets: ["ParleyStore"]),
        .library(name: "ParleyServer", targets: ["ParleyServer"]),
        .library(name: "ParleyClient", targets: ["ParleyClient"]),
        .library(name: "ParleyUI", targets: ["ParleyUI"]),
        .library(name: "ParleyTesting", targets: ["ParleyTesting"]),
        .executable(name: "parley", targets: ["parley"]),
    ],
    targets: [
        cLibrary("CLibWebsockets", pkgConfig: "libwebsockets", apt: ["libwebsockets-dev"], brew: ["libwebsockets"]),
        // The event loop libwebsockets runs on (epoll instead of its built-in poll()).
        cLibrary("CLibEV", apt: ["libev-dev"], brew: ["libev"]),
        cLibrary("COpenSSL", pkgConfig: "openssl", apt: ["libssl-dev"], brew: ["openssl@3"]),
        cLibrary("CSQLite", pkgConfig: "sqlite3", apt: ["libsqlite3-dev"], brew: ["sqlite"]),
        // The PostgreSQL client library, for the store's PostgreSQL engine.
        cLibrary("CLibPQ", pkgConfig: "libpq", apt: ["libpq-dev"], brew: ["libpq"]),
        cLibrary("CSoxr", pkgConfig: "soxr", apt: ["libsoxr-dev"], brew: ["libsoxr"]),
        // Noise suppression and echo cancellation of the input (noise_reduction).
        cLibrary("CSpeexDSP", pkgConfig: "speexdsp", apt: ["libspeexdsp-dev"], brew: ["speexdsp"]),
        cLibrary("CFlite", apt: ["flite1-dev"], brew: ["flite"]),
        // Built from the whisper.cpp source in the pywhispercpp sdist by scripts/setup.
        // glibc's allocator settings (part of libc: nothing to install).
        cLibrary("CMalloc", apt: [], brew: []),
        cLibrary("CWhisper", pkgConfig: "parley-whisper", apt: [], brew: ["whisper-cpp"]),
        // onnxruntime's C API header, installed by scripts/setup; the library is loaded at run time.
        cLibrary("COnnxRuntime", pkgConfig: "parley-onnxruntime", apt: [], brew: ["onnxruntime"]),
        // WebRTC: SRTP, SCTP for data channels (no pkgConfig: its -DINET flags are refused), and Opus.
        cLibrary("CSRTP", pkgConfig: "libsrtp2", apt: ["libsrtp2-dev"], brew: ["srtp"]),
        cLibrary("CUsrsctp", apt: ["libusrsctp-dev"], brew: ["usrsctp"]),
        cLibrary("COpus", pkgConfig: "opus", apt: ["libopus-dev"], brew: ["opus"]),
        // The SIP door: baresip's libre (SIP transactions and sessions, SDP, RTP, RFC 4733, digest).
        cLibrary("CLibre", pkgConfig: "libre", apt: ["libre-dev"], brew: ["libre"]),

        // The Silero network's inner loop: optimised and vectorised in every configuration, so
        // debug builds (the tests) do not spend seconds of CPU per session-minute in it.
        .target(name: "CParleyKernels", cSettings: [.unsafeFlags(["-O3", "-ffast-math"])]),
        // webrtc-audio-processing's noise suppressor (a C++ library) behind a small C interface.
        .target(
            name: "CWebRTCAudioProcessing",
            cxxSettings: [
                .unsafeFlags(["-I/usr/include/webrtc_audio_processing"]), .define("WEBRTC_POSIX"), .define("WEBRTC_AUDIO_PROCESSING_ONLY_BUILD"),
            ],
            linkerSettings: [.linkedLibrary("webrtc_audio_processing")]
        ),

        // `Locked`, the lock every module uses (ThreadSanitizer sees it; the standard `Mutex` it does not).
        .target(name: "ParleySync"),
        .target(name: "ParleyCore", dependencies: ["ParleySync"]),
        .target(name: "ParleyNet", dependencies: ["ParleySync", "CLibWebsockets", "CLibEV", "COpenSSL", "CMalloc"]),
        .target(name: "ParleyOpenAI", dependencies: ["ParleyCore", "ParleyNet"]),
        .target(name: "ParleyLocal", dependencies: ["ParleyCore", "ParleySync", "ParleyNet", "ParleyOpenAI", "CSoxr", "CSpeexDSP", "CFlite", "CWhisper", "CParleyKernels", "COnnxRuntime", "CWebRTCAudioProcessing"]),
        .target(name: "ParleyStore", dependencies: ["ParleyCore", "CSQLite", "CLibPQ"]),
        // WebRTC calls: ICE-lite, DTLS, SRTP, SCTP data channels and Opus, on Debian's libraries.
        .target(name: "ParleyRTC", dependencies: ["COpenSSL", "CSRTP", "CUsrsctp", "COpus"]),
        // SIP calls on libre: trunk admission, INVITE to BYE, Opus or G.711 over RTP paced 20 ms.
        .target(name: "ParleySIP", dependencies: ["ParleyCore", "ParleySync", "ParleyNet", "ParleyRTC", "CLibre"]),
        .target(
            name: "ParleyServer",
            dependencies: ["ParleyCore", "ParleySync", "ParleyNet", "ParleyOpenAI", "ParleyLocal", "ParleyStore", "ParleyRTC", "ParleySIP", "COpenSSL"]
        ),
        // On Apple platforms the client speaks WebSocket through URLSession; libwebsockets is for Linux.
        .target(name: "ParleyClient", dependencies: ["ParleyCore", .target(name: "ParleyNet", condition: .when(platforms: [.linux]))]),
        .target(name: "ParleyUI", dependencies: ["ParleyClient", "ParleyCore"]),
        .target(name: "ParleyTesting", dependencies: ["ParleyCore", "ParleyNet"]),
        .target(
            name: "ParleyCLI",
            dependencies: ["ParleyCore", "ParleyNet", "ParleyOpenAI", "ParleyLocal", "ParleyStore", "ParleyServer", "ParleyClient"]
        ),
        .executableTarget(name: "parley", dependencies: ["ParleyCLI"]),

        .executableTarget(
            name: "ParleyBenchmarks",
            dependencies: [
                "ParleyCore", "ParleySync", "ParleyNet", "ParleyOpenAI", "ParleyLocal", "ParleyStore", "ParleyServer",
                "ParleySIP", "ParleyTesting", "CLibWebsockets", "TurnEvaluation", "BenchmarkHarness",
            ],
            path: "Benchmarks/ParleyBenchmarks"
        ),
        // The benchmarks' own rules, kept apart so they are tested: the capacity search, the
        // percentile, where a question's speech ends.
        .target(name: "BenchmarkHarness", path: "Benchmarks/Harness"),
        // The turn-taking corpus and harness, shared by the `turns` bench area and its test.
        .target(
            name: "TurnEvaluation",
            dependencies: ["ParleyCore", "ParleyNet", "ParleyLocal", "ParleyServer", "ParleyTesting", "BenchmarkHarness"],
            path: "Benchmarks/TurnEvaluation"
        ),
        .executableTarget(
            name: "FakeUpstream",
            dependencies: ["ParleyTesting", "ParleyNet", "ParleyCore"],
            path: "Benchmarks/FakeUpstream"
        ),

        .testTarget(name: "ParleyCoreTests", dependencies: ["ParleyCore", "ParleySync", "ParleyTesting"]),
        .testTarget(name: "ParleyNetTests", dependencies: ["ParleyNet", "ParleyTesting"]),
        .testTarget(name: "ParleyOpenAITests", dependencies: ["ParleyOpenAI", "ParleyCore", "ParleyNet", "ParleyTesting"]),
        .testTarget(name: "ParleyLocalTests", dependencies: ["ParleyLocal", "ParleyCore", "ParleyOpenAI", "ParleyTesting"]),
        .testTarget(name: "ParleyStoreTests", dependencies: ["ParleyStore", "ParleyCore", "ParleyTesting"]),
        .testTarget(name: "ParleyRTCTests", dependencies: ["ParleyRTC"]),
        .testTarget(name: "ParleyServerTests", dependencies: ["ParleyServer", "ParleyCore", "ParleyNet", "ParleySync", "ParleySIP", "ParleyTesting"]),
        .testTarget(name: "ParleyClientTests", dependencies: ["ParleyClient", "ParleyServer", "ParleyCore", "ParleyNet", "ParleySync", "ParleyTesting"]),
        .testTarget(name: "ParleyCLITests", dependencies: ["ParleyCLI", "ParleyCore", "ParleyLocal", "ParleyTesting"]),
        .testTarget(name: "TurnEvaluationTests", dependencies: ["TurnEvaluation", "ParleyCore"]),
        .testTarget(name: "BenchmarkHarnessTests", dependencies: ["BenchmarkHarness"]),
    ],
    swiftLanguageModes: [.v6]
)
