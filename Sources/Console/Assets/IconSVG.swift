// The console's icon.svg: the text between the #""" lines is the file, served as is.
extension ConsoleAssets {
    static let iconSVG = #"""
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1f4e79"/><path d="M7 23c3-9 9-14 18-14-3 2-5 5-6 9l-4 1 3 2c-2 2-6 3-11 2z" fill="#f5c542"/></svg>
"""#
}
