// swift-tools-version:6.0
import PackageDescription

// RoostKit: the Swift client of Roost (https://github.com/roost/roost).
// Foundation and the platform's SQLite only: no other package, no pkg-config.
//
// Minimums follow the APIs used: async URLSession (`data(for:)`) needs iOS 15,
// macOS 12, tvOS 15, watchOS 8; the Observation model (`RoostQueryModel`) is
// marked iOS 17 / macOS 14 / tvOS 17 / watchOS 10 and compiled only where
// Observation exists. Foundation's `NSLock.withLock` (iOS 17) is not used.
let package = Package(
    name: "RoostKit",
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1)],
    products: [
        .library(name: "RoostKit", targets: ["RoostKit"]),
    ],
    targets: [
        // SQLite on Linux: <sqlite3.h> from libsqlite3-dev, linked as -lsqlite3.
        // Apple platforms import the SDK's SQLite3 module instead.
        .systemLibrary(name: "CRoostKitSQLite", providers: [.apt(["libsqlite3-dev"]), .yum(["sqlite-devel"])]),
        .target(name: "RoostKit", dependencies: [
            .target(name: "CRoostKitSQLite", condition: .when(platforms: [.linux, .android, .windows, .openbsd, .wasi])),
        ]),
        // Unit tests that need no server: they run on Linux, a Mac and the iOS simulator.
        .testTarget(name: "RoostKitTests", dependencies: ["RoostKit"]),
    ],
    swiftLanguageModes: [.v6]
)
