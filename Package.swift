// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Roost",
    // The daemon is Linux-first; macOS for building it on a Mac (at or above RoostKit's minimum).
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "roostd", targets: ["roostd"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "5.0.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // The Swift client library, a package of its own (Clients/RoostKit, published as its
        // own repository by scripts/publish-roostkit.sh). Only the tests and the example use it.
        .package(path: "Clients/RoostKit"),
    ],
    targets: [
        // Thin system-library targets: the C libraries Roost stands on.
        .systemLibrary(name: "CEvent", pkgConfig: "libevent"),
        // Reading large bodies in few system calls.
        .target(name: "CEventShim", dependencies: ["CEvent"]),
        // Every evhttp connection's gate (strict request heads, header time,
        // connections per address, PROXY headers), HTTPS listeners as OpenSSL
        // bufferevents, and a TLS context that SIGHUP can swap (libevent_openssl, libssl).
        .target(name: "CEventTLS", dependencies: ["CEvent", "CEventShim"],
                linkerSettings: [.linkedLibrary("event_openssl"), .linkedLibrary("ssl"), .linkedLibrary("crypto")]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3"),
        .systemLibrary(name: "CPCRE2", pkgConfig: "libpcre2-8"),
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium"),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto"),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib"),
        // Non-variadic C wrappers around libvips, with no glib types in their header.
        // roostd does not link libvips: the shim dlopens libvips.so.42 at the first image.
        .target(name: "CVipsShim", linkerSettings: [.linkedLibrary("dl")]),
        // cachestat(2), which Swift cannot reach (syscall is variadic).
        .target(name: "CFileShim"),
        // SQLite's "roost-nowait" VFS: reads from the page cache or fail, never wait (event loops' reads).
        .target(name: "CSQLiteNoWait", dependencies: ["CSQLite"]),
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd"),
        // jemalloc as the process's malloc, and its options (linked by Daemon; see Allocator.swift).
        .target(name: "CJemalloc", linkerSettings: [.linkedLibrary("jemalloc")]),
        // Non-variadic calls around curl_easy_setopt: webhook delivery and the S3
        // file store (files_store: s3). roostd
        // does not link libcurl: the shim dlopens libcurl.so.4 at the first delivery.
        // The push client's HTTP/2 transport (roost_h2_direct.c) links nghttp2 and libssl.
        .target(name: "CCurlShim", linkerSettings: [.linkedLibrary("dl"), .linkedLibrary("nghttp2"), .linkedLibrary("ssl"), .linkedLibrary("crypto")]),
        // libpq's header (libpq-dev), for the StorePostgres engine (issue #17). Not linked:
        // CPostgresShim defines the functions and dlopens libpq.so.5 at the first connection.
        .systemLibrary(name: "CPostgres"),
        // Lua 5.4 (liblua5.4-dev) for operator scripts: allocator caps, count hook,
        // protected calls and the trampoline to Swift, everything that can longjmp (docs/SCRIPTING.md).
        .target(name: "CLuaShim", linkerSettings: [.linkedLibrary("lua5.4")]),
        .target(name: "CPostgresShim", linkerSettings: [.linkedLibrary("dl")]),
        // RS256/ES256 signature checks of ID tokens with libcrypto's EVP (Sign in with Apple/Google, OIDC).
        .target(name: "CJOSEShim", linkerSettings: [.linkedLibrary("crypto")]),

        // Pure Swift building blocks, lowest first.
        .target(name: "JSON"),
        .target(name: "HTTP", dependencies: ["JSON"]),
        // JSON Schema (draft 2020-12 subset, docs/SCHEMAS.md): compiled once, checked per write.
        .target(name: "Schema", dependencies: ["JSON", "CPCRE2"]),
        // The monotonic clock and Duration conversions, written once.
        .target(name: "Timing"),
        .target(name: "Jobs", dependencies: ["CFileShim", "Timing", .product(name: "Logging", package: "swift-log")]),
        .target(name: "EventLoop", dependencies: ["CEvent", "CEventShim", "CEventTLS", "HTTP", "Jobs", "Timing", .product(name: "Logging", package: "swift-log")]),
        .target(name: "Auth", dependencies: ["CSodium", "CJOSEShim", "JSON"]),
        // The engine seam and the engine-neutral rules (filters, cursors, access, limits).
        .target(name: "Store", dependencies: ["CPCRE2", "CSodium", "JSON", "Schema", .product(name: "Logging", package: "swift-log")]),
        // The SQLite engine under the Store seam (the default; docs/ENGINES.md).
        .target(name: "StoreSQLite", dependencies: ["Store", "CSQLite", "CSQLiteNoWait", "CPCRE2", "CSodium", "JSON", "Jobs", "Schema", .product(name: "Logging", package: "swift-log")]),
        // The PostgreSQL engine under the Store seam (database_url; docs/ENGINES.md).
        .target(name: "StorePostgres", dependencies: ["Store", "CPostgres", "CPostgresShim", "JSON", "Schema", .product(name: "Logging", package: "swift-log")]),
        // The file store: upload inspection, durable layout, thumbnails (libvips).
        .target(name: "Files", dependencies: ["CVipsShim", "CFileShim", "CCurlShim", "CCrypto", "CZlib", "HTTP", "JSON", .product(name: "Logging", package: "swift-log")]),

        // Online backups: database snapshot, file store, manifest, verification, restore.
        .target(name: "Backup", dependencies: ["CCrypto", "CFileShim", "Files", "Store", "StoreSQLite"]),

        // The business-logic hook registry (knows nothing of users or messages).
        .target(name: "Hooks", dependencies: ["HTTP", "JSON", "Jobs", "Timing", .product(name: "Logging", package: "swift-log")]),
        // Lua scripts: sandboxed states, budgets, the roost API's host side (docs/SCRIPTING.md).
        .target(name: "Scripts", dependencies: ["CLuaShim", "CCurlShim", "JSON", "Hooks", "Timing", .product(name: "Logging", package: "swift-log")]),
        // Outgoing webhooks: signing, payloads, delivery from the durable outbox.
        .target(name: "Webhooks", dependencies: ["CCurlShim", "CSodium", "JSON", "Jobs", "Store", "Timing", .product(name: "Logging", package: "swift-log")]),

        // Direct push: APNs and FCM over HTTP/2 (libcurl multi, CCurlShim/roost_h2.c),
        // provider JWTs signed with OpenSSL, delivered from the durable push outbox.
        .target(name: "Push", dependencies: ["CCurlShim", "CCrypto", "JSON", "Jobs", "Store", "Webhooks", .product(name: "Logging", package: "swift-log")]),

        // Unix-daemon plumbing: sd_notify, watchdog, socket activation, journald, metrics.
        .target(name: "Daemon", dependencies: [
            "CSystemd", "CJemalloc", "Jobs", "Timing",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Metrics", package: "swift-metrics"),
            .product(name: "Prometheus", package: "swift-prometheus"),
        ]),

        // The admin console (served at /_/): its HTML, CSS and JavaScript files in Web/, compiled in by EmbedFiles.
        .target(name: "Console", dependencies: ["HTTP"], exclude: ["Web"], plugins: ["EmbedFiles"]),

        // Composition root and the daemon.
        .target(name: "Roost", dependencies: [
            "JSON", "HTTP", "Jobs", "EventLoop", "Schema", "Store", "StoreSQLite", "StorePostgres", "Auth", "Daemon", "Files", "Hooks", "Scripts", "Webhooks", "Push", "Backup", "Console", "Timing",
            .product(name: "Metrics", package: "swift-metrics"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Yams", package: "Yams"),
        ], plugins: ["EmbedFiles"]),
        // Files compiled into a target as Swift strings (openapi.yaml into Roost, Web/ into Console):
        // a tool and the build plugin that runs it (its table names each target's files).
        .executableTarget(name: "EmbedText"),
        .plugin(name: "EmbedFiles", capability: .buildTool(), dependencies: ["EmbedText"]),
        .executableTarget(name: "roostd", dependencies: [
            "Roost", "Daemon",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),

        // A command-line chat client on RoostKit (see Examples/RoostChat/README.md).
        .executableTarget(name: "RoostChat", dependencies: [.product(name: "RoostKit", package: "RoostKit")], path: "Examples/RoostChat"),
        // The two seed apps' model layers as walk-throughs (Examples/*/README.md), run by the integration tests.
        .executableTarget(name: "TourMyTown", dependencies: [.product(name: "RoostKit", package: "RoostKit")], path: "Examples/TourMyTown",
                          exclude: ["README.md"]),
        .executableTarget(name: "WaterCooler", dependencies: [.product(name: "RoostKit", package: "RoostKit")], path: "Examples/WaterCooler",
                          exclude: ["README.md"]),

        .testTarget(name: "JSONTests", dependencies: ["JSON"]),
        // The official JSON-Schema-Test-Suite files in Suite/ (MIT, see Suite/LICENSE; read by path) and Roost's own cases.
        .testTarget(name: "SchemaTests", dependencies: ["Schema", "JSON"], exclude: ["Suite"]),
        .testTarget(name: "AuthTests", dependencies: ["Auth"]),
        .testTarget(name: "JobsTests", dependencies: ["Jobs", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "EventLoopTests", dependencies: ["EventLoop", "HTTP"]),
        // StoreTests also run the filter corpora on a throwaway PostgreSQL (StorePostgres).
        .testTarget(name: "StoreTests", dependencies: ["Store", "StoreSQLite", "StorePostgres", "JSON", "RoostTestSupport"]),
        .testTarget(name: "FilesTests", dependencies: ["Files", "HTTP", "JSON", "RoostTestSupport", .product(name: "Logging", package: "swift-log")]),
        // A real roostd started for a test, shared by the test targets that need one.
        .target(name: "RoostTestSupport", path: "Tests/Support"),
        .testTarget(name: "RoostTests", dependencies: [
            "JSON", "roostd", "Roost", "Auth", "HTTP", "EventLoop", "Store", "StoreSQLite", "StorePostgres", "Jobs", "Backup", "Files", "RoostTestSupport",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Yams", package: "Yams"),
        ]),
        .testTarget(name: "BackupTests", dependencies: ["Backup", "Store", "StoreSQLite", "Files"]),
        .testTarget(name: "ScriptsTests", dependencies: ["Scripts", "JSON", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "PushTests", dependencies: ["Push", "JSON", "Store", "StoreSQLite", "CCrypto", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "HooksTests", dependencies: ["Hooks", "HTTP", "JSON", "Webhooks", .product(name: "Logging", package: "swift-log")]),
        // RoostKit against a real roostd (its unit tests live in Clients/RoostKit/Tests).
        .testTarget(name: "RoostKitIntegrationTests", dependencies: [
            .product(name: "RoostKit", package: "RoostKit"), "roostd", "RoostChat", "TourMyTown", "WaterCooler", "RoostTestSupport",
        ]),
        .testTarget(name: "ConsoleTests", dependencies: ["Console", "HTTP"]),
        .testTarget(name: "DaemonTests", dependencies: ["Daemon", "CSystemd", .product(name: "Logging", package: "swift-log")]),
    ],
    swiftLanguageModes: [.v6]
)
