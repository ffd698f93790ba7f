// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Roost",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "roostd", targets: ["roostd"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "5.0.1"),
    ],
    targets: [
        // Thin system-library targets: the C libraries Roost stands on.
        .systemLibrary(name: "CEvent", pkgConfig: "libevent"),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3"),
        .systemLibrary(name: "CPCRE2", pkgConfig: "libpcre2-8"),
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium"),

        // Pure Swift building blocks, lowest first.
        .target(name: "JSON"),
        .target(name: "HTTP", dependencies: ["JSON"]),
        .target(name: "Jobs", dependencies: [.product(name: "Logging", package: "swift-log")]),
        .target(name: "EventLoop", dependencies: ["CEvent", "HTTP", .product(name: "Logging", package: "swift-log")]),
        .target(name: "Auth", dependencies: ["CSodium"]),
        .target(name: "Store", dependencies: ["CSQLite", "CPCRE2", "JSON", .product(name: "Logging", package: "swift-log")]),

        // Composition root and the daemon.
        .target(name: "Roost", dependencies: [
            "JSON", "HTTP", "Jobs", "EventLoop", "Store", "Auth",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Yams", package: "Yams"),
        ]),
        .executableTarget(name: "roostd", dependencies: [
            "Roost",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),

        .testTarget(name: "JSONTests", dependencies: ["JSON"]),
        .testTarget(name: "StoreTests", dependencies: ["Store", "JSON"]),
        .testTarget(name: "RoostTests", dependencies: ["JSON", "roostd"]),
    ],
    swiftLanguageModes: [.v6]
)
