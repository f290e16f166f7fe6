// swift-tools-version:6.0
// A minimal SwiftUI app on ParleyClient and ParleyUI. macOS: `swift run` here with a Parley
// server on http://127.0.0.1:8080 (or PARLEY_URL). iOS: see README.md.
import PackageDescription

let package = Package(
    name: "ParleyDemoApp",
    platforms: [.macOS(.v14), .iOS(.v17)],
    dependencies: [.package(name: "Parley", path: "../..")],
    targets: [
        .executableTarget(
            name: "ParleyDemoApp",
            dependencies: [
                .product(name: "ParleyClient", package: "Parley"),
                .product(name: "ParleyUI", package: "Parley"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
