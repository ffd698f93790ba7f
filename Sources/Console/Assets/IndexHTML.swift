// The console's index.html: the text between the #""" lines is the file, served as is.
extension ConsoleAssets {
    static let indexHTML = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Roost console</title>
<link rel="icon" href="{{ASSETS}}/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="{{ASSETS}}/style.css">
<script type="module" src="{{ASSETS}}/app.js"></script>
</head>
<body>
<div id="app"><p class="loading">Loading the Roost console…</p></div>
<noscript><p>The Roost console needs JavaScript.</p></noscript>
</body>
</html>
"""#
}
