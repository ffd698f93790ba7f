/// The console's files. Each lives in its own file in this folder as a raw
/// string literal; add a new one to `all` (the page, `indexHTML`, is served at
/// `/_/` and is not listed).
enum ConsoleAssets {
    static let all: [ConsoleAsset] = [
        ConsoleAsset("api.js", apiJS),
        ConsoleAsset("app.js", appJS),
        ConsoleAsset("chart.js", chartJS),
        ConsoleAsset("dom.js", domJS),
        ConsoleAsset("icon.svg", iconSVG),
        ConsoleAsset("page-collections.js", pageCollectionsJS),
        ConsoleAsset("page-dashboard.js", pageDashboardJS),
        ConsoleAsset("page-files.js", pageFilesJS),
        ConsoleAsset("page-hooks.js", pageHooksJS),
        ConsoleAsset("page-logs.js", pageLogsJS),
        ConsoleAsset("page-records.js", pageRecordsJS),
        ConsoleAsset("page-users.js", pageUsersJS),
        ConsoleAsset("page-webhooks.js", pageWebhooksJS),
        ConsoleAsset("page-push.js", pagePushJS),
        ConsoleAsset("style.css", styleCSS),
    ]
}
